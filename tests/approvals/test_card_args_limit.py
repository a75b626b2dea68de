"""A live card carries args up to CONDOR_CARD_ARGS_MAX_BYTES of canonical JSON; past it, no args at all.

A cut card says so (`args_truncated`, the full size, the start of the text to
read) and carries `args: null`, so nothing can approve or edit what nobody was
shown; the reviewer's "Show all" reads the full args from the approval itself,
whose payload hash is the card's.
"""

import pytest

from approvals import cards
from approvals.models import Approval
from core.hashing import canonical_json, payload_hash
from runs.models import RunEvent
from tests.helpers.approval_loop import approval_row, parked_run

LIMIT = 256
SMALL = {"drug": "amoxicillin", "dose": "500 mg"}
# Over the limit, with multi-byte characters around the cut.
LARGE = {"drug": "amoxicillin", "notes": "ünïcødé ✓ " * 60}


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.CONDOR_CARD_ARGS_MAX_BYTES = LIMIT


def parked_with(api, args) -> Approval:
    return approval_row(parked_run(api, args=args)[1]["id"])


def test_args_within_the_limit_travel_whole(api):
    card = cards.card(parked_with(api, SMALL))
    assert (card["args"], card["args_truncated"], card["args_bytes"]) == (SMALL, False, len(canonical_json(SMALL)))
    assert "args_preview" not in card


def test_args_past_the_limit_are_left_out_and_the_card_says_so(api):
    card = cards.card(parked_with(api, LARGE))

    assert card["args"] is None  # nothing to approve or edit from
    assert card["args_truncated"] is True
    assert card["args_bytes"] == len(canonical_json(LARGE)) > LIMIT


def test_the_preview_is_the_start_of_the_canonical_text_cut_on_a_character(api):
    preview = cards.card(parked_with(api, LARGE))["args_preview"]

    assert len(preview.encode()) <= LIMIT
    assert canonical_json(LARGE).decode().startswith(preview)
    assert len(preview.encode()) > LIMIT - 4  # at most one partial character dropped


def test_the_pushed_card_is_cut_too(api):
    approval = parked_with(api, LARGE)
    pushed = RunEvent.objects.get(kind="approval.suspended", data__approval_id=str(approval.pk)).inbox
    assert (pushed["card"]["args"], pushed["card"]["args_truncated"]) == (None, True)


def test_show_all_reads_exactly_the_hashed_args_from_the_approval(api, reviewer_http):
    card = cards.card(parked_with(api, LARGE))

    fetched = reviewer_http.get(f"/api/v1/approvals/{card['id']}/")

    assert fetched.status_code == 200
    full = fetched.json()
    assert full["args"] == LARGE
    assert full["payload_hash"] == card["payload_hash"] == payload_hash(LARGE)
