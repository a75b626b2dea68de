"""A reviewer approves the payload they were shown, whole (approvals/seen.py).

Under four eyes an edit puts new args on the table while another reviewer still has
the old card open: that reviewer's approval names the hash they saw and is refused
with 409 payload_changed, changing nothing. A card too long to show whole can be
approved unedited only by a reviewer who loaded its full args (recorded as an
`args_viewed` audit row for that payload): otherwise 409 full_args_not_viewed.
"""

import pytest

from approvals.models import Approval
from audit.models import AuditEvent
from core import hashing
from core.hashing import payload_hash
from tests.helpers.approval_loop import approval_row, approve, decide, suspend
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run

SIGNATURE = {"document_id": "d-7", "signer": "Dr. Okafor"}
EDITED = {"document_id": "d-7", "signer": "Dr. Mensah"}
LONG = {"drug": "amoxicillin", "notes": "take with food " * 40}


@pytest.fixture
def rob_http(rob):
    return logged_in(rob)


@pytest.fixture
def signing(api) -> str:
    """A parked sign_document call: it needs two approvals, so an edit can land while it is open."""
    return suspend(api, open_executing_run(api), tool="sign_document", op="sign", args=SIGNATURE)["id"]


def test_an_approval_of_the_args_before_an_edit_is_refused_and_changes_nothing(signing, reviewer_http, rob_http):
    shown_to_rita = payload_hash(SIGNATURE)
    approve(rob_http, signing, edited_args=EDITED, payload_hash=shown_to_rita)  # rob edits: count restarts

    refused = decide(reviewer_http, signing, {"approved": True, "payload_hash": shown_to_rita})

    assert (refused.status_code, refused.json()["error"]) == (409, "payload_changed")
    row = approval_row(signing)
    assert (row.status, row.approved_args, [vote["reviewer"] for vote in row.approvals]) == ("pending", EDITED, ["rob"])


def test_an_approval_naming_no_hash_is_refused_once_an_edit_is_on_the_table(signing, reviewer_http, rob_http):
    approve(rob_http, signing, edited_args=EDITED)
    refused = decide(reviewer_http, signing, {"approved": True})
    assert (refused.status_code, refused.json()["error"]) == (409, "payload_changed")


def test_an_approval_naming_the_edited_payload_meets_the_quorum(signing, reviewer_http, rob_http):
    approve(rob_http, signing, edited_args=EDITED)
    answer = approve(reviewer_http, signing, payload_hash=payload_hash(EDITED))
    assert (answer["status"], answer["approved_args"]) == ("approved", EDITED)


def test_a_stale_hash_on_a_plain_card_is_refused(api, reviewer_http):
    approval = suspend(api, open_executing_run(api))["id"]
    refused = decide(reviewer_http, approval, {"approved": True, "payload_hash": "0" * 64})
    assert (refused.status_code, refused.json()["error"]) == (409, "payload_changed")
    assert approval_row(approval).status == "pending"


@pytest.mark.parametrize("bad", ["ABC", 7, "g" * 64])
def test_a_malformed_hash_is_a_400(api, reviewer_http, bad):
    approval = suspend(api, open_executing_run(api))["id"]
    refused = decide(reviewer_http, approval, {"approved": True, "payload_hash": bad})
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_payload")
    assert approval_row(approval).status == "pending"


@pytest.fixture
def cut_card(api, settings) -> str:
    settings.CONDOR_CARD_ARGS_MAX_BYTES = 256
    return suspend(api, open_executing_run(api), args=LONG)["id"]


def test_a_cut_card_cannot_be_approved_unread(cut_card, reviewer_http):
    refused = decide(reviewer_http, cut_card, {"approved": True, "payload_hash": payload_hash(LONG)})
    assert (refused.status_code, refused.json()["error"]) == (409, "full_args_not_viewed")
    assert approval_row(cut_card).status == "pending"


def test_loading_the_full_args_is_recorded_and_lets_that_reviewer_approve(cut_card, reviewer_http, rob_http):
    assert reviewer_http.get(f"/api/v1/approvals/{cut_card}/").json()["args"] == LONG
    viewed = AuditEvent.objects.get(kind="args_viewed")
    assert (viewed.actor, viewed.data["payload_hash"]) == ("user:rita", payload_hash(LONG))

    # Rita's reading is not Rob's.
    assert decide(rob_http, cut_card, {"approved": True}).json()["error"] == "full_args_not_viewed"
    assert approve(reviewer_http, cut_card, payload_hash=payload_hash(LONG))["status"] == "approved"


def test_an_agent_fetching_the_approval_records_no_reading(cut_card, api):
    assert api.get(f"/api/v1/approvals/{cut_card}/").status_code == 200
    assert not AuditEvent.objects.filter(kind="args_viewed").exists()


def test_an_edit_of_a_cut_card_carries_its_own_whole_args(cut_card, reviewer_http):
    edited = {"drug": "amoxicillin", "notes": "take with food"}
    answer = approve(reviewer_http, cut_card, edited_args=edited, payload_hash=payload_hash(LONG))
    assert (answer["status"], answer["approved_args"]) == ("approved", edited)


def test_a_short_card_needs_no_reading(api, reviewer_http):
    approval = suspend(api, open_executing_run(api))["id"]
    assert approve(reviewer_http, approval)["status"] == "approved"
    assert not AuditEvent.objects.filter(kind="args_viewed").exists()


def test_a_decision_canonicalises_the_approved_args_once(cut_card, reviewer_http, monkeypatch):
    # RFC 8785 in pure Python costs milliseconds on args too long for a card: the decision takes
    # their canonical form once, for the cut check and the hash alike (core/hashing.py Canonical).
    reviewer_http.get(f"/api/v1/approvals/{cut_card}/")  # "Show all"
    shown = payload_hash(LONG)
    canonicalised = []
    for name in ("canonical_json", "canonical_json_fast"):  # every way core.hashing writes the form
        real = getattr(hashing, name)
        monkeypatch.setattr(
            hashing,
            name,
            lambda value, *args, real=real, **kwargs: (canonicalised.append(value), real(value, *args, **kwargs))[1],
        )

    assert approve(reviewer_http, cut_card, payload_hash=shown)["status"] == "approved"

    assert canonicalised.count(LONG) == 1


def test_the_hash_approved_is_taken_from_the_args_never_copied_from_the_row(api, reviewer_http):
    # A row whose args no longer match its stored hash (written past the services): what is
    # approved is bound to the args the card showed and that will run, not to the stale hash.
    approval = suspend(api, open_executing_run(api))["id"]
    stored = approval_row(approval).payload_hash
    shown = {"drug": "amoxicillin", "dose_mg": 250}
    Approval.objects.filter(pk=approval).update(args=shown)

    answer = approve(reviewer_http, approval, payload_hash=stored)

    assert (answer["approved_args"], answer["payload_hash"]) == (shown, payload_hash(shown))


LONG_SIGNATURE = {**SIGNATURE, "notes": "countersigned on the ward round " * 20}
LONG_EDITED = {**EDITED, "notes": "countersigned on the ward round " * 20}


def test_reading_the_args_before_an_edit_does_not_count_as_reading_the_edited_ones(
    api, settings, reviewer_http, rob_http
):
    settings.CONDOR_CARD_ARGS_MAX_BYTES = 256
    signing = suspend(api, open_executing_run(api), tool="sign_document", op="sign", args=LONG_SIGNATURE)["id"]
    assert reviewer_http.get(f"/api/v1/approvals/{signing}/").json()["args"] == LONG_SIGNATURE  # rita reads it all
    approve(rob_http, signing, edited_args=LONG_EDITED, payload_hash=payload_hash(LONG_SIGNATURE))  # then rob edits

    refused = decide(reviewer_http, signing, {"approved": True, "payload_hash": payload_hash(LONG_EDITED)})

    assert (refused.status_code, refused.json()["error"]) == (409, "full_args_not_viewed")
    assert approval_row(signing).status == "pending"
    reviewer_http.get(f"/api/v1/approvals/{signing}/")  # she reads the edited args
    assert approve(reviewer_http, signing, payload_hash=payload_hash(LONG_EDITED))["status"] == "approved"
