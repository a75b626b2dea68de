"""Four eyes (SPEC section 10): a tool's `approvals_required` distinct reviewers approve the same payload.

The approval stays pending (no decision chunk for the agent) until the quorum is
met; the same reviewer twice is 409 already_approved_by_you; one rejection ends it;
an edit changes the payload and restarts the count with the editor's approval;
resume before the quorum is 409 approval_pending. sign_document ships with 2.
"""

import pytest
from django.core.management import call_command

from approvals.models import Approval
from audit.models import AuditEvent
from core.hashing import payload_hash
from registry.models import ToolDescriptor
from runs.models import RunEvent
from tests.helpers.approval_loop import approval_row, approve, decide, resume, suspend
from tests.helpers.personas import logged_in, person
from tests.helpers.races import all_at_once
from tests.helpers.runs import open_executing_run, run_state

SIGNATURE = {"document_id": "d-7", "signer": "Dr. Okafor"}


@pytest.fixture
def rob_http(rob):
    return logged_in(rob)


@pytest.fixture
def signing(api) -> tuple[str, str]:
    """(run id, approval id) of a parked sign_document call, which needs two approvals."""
    run_id = open_executing_run(api)
    return run_id, suspend(api, run_id, tool="sign_document", op="sign", args=SIGNATURE)["id"]


def decision_chunks(approval_id) -> list[dict]:
    return [
        frame
        for event in RunEvent.objects.order_by("id")
        for frame in event.frames
        if frame.get("type") == "data-approval-decision" and frame.get("id") == approval_id
    ]


def test_sign_document_needs_two_approvals(signing, api):
    _, approval = signing
    fetched = api.get(f"/api/v1/approvals/{approval}/").json()
    assert (fetched["approvals_required"], fetched["approvals"]) == (2, [])


def test_one_approval_of_two_leaves_it_pending_without_a_decision_chunk(signing, reviewer_http):
    _, approval = signing
    answer = approve(reviewer_http, approval, reason="Letter reads well.")
    assert answer["status"] == "pending"
    assert [(a["reviewer"], a["reason"]) for a in answer["approvals"]] == [("rita", "Letter reads well.")]
    assert decision_chunks(approval) == []


def test_two_distinct_reviewers_approve_it(signing, api, reviewer_http, rob_http):
    run_id, approval = signing
    approve(reviewer_http, approval)
    answer = approve(rob_http, approval)
    assert answer["status"] == "approved" and answer["decided_by"] == "rob"
    assert [a["reviewer"] for a in answer["approvals"]] == ["rita", "rob"]
    [chunk] = decision_chunks(approval)
    assert chunk["data"]["approved"] is True and chunk["data"]["args"] == SIGNATURE
    assert resume(api, run_id, approval, SIGNATURE).status_code == 200


def test_the_same_reviewer_twice_is_refused(signing, reviewer_http):
    _, approval = signing
    approve(reviewer_http, approval)
    refused = decide(reviewer_http, approval, {"approved": True})
    assert refused.status_code == 409 and refused.json()["error"] == "already_approved_by_you"
    assert len(approval_row(approval).approvals) == 1


def test_resume_before_the_quorum_is_pending(signing, api, reviewer_http):
    run_id, approval = signing
    approve(reviewer_http, approval)
    refused = resume(api, run_id, approval, SIGNATURE)
    assert refused.status_code == 409 and refused.json()["error"] == "approval_pending"
    assert run_state(run_id) == ("suspended", "")


def test_a_rejection_after_one_approval_ends_it(signing, reviewer_http, rob_http):
    _, approval = signing
    approve(reviewer_http, approval)
    rejected = decide(rob_http, approval, {"approved": False, "reason": "Wrong signer."})
    assert rejected.json()["status"] == "rejected"
    [chunk] = decision_chunks(approval)
    assert chunk["data"]["approved"] is False


def test_an_edit_restarts_the_count_with_the_editors_approval(signing, api, reviewer_http, rob_http):
    run_id, approval = signing
    edited = {**SIGNATURE, "signer": "Dr. Adeyemi"}
    approve(reviewer_http, approval)
    after_edit = approve(rob_http, approval, edited_args=edited)
    assert after_edit["status"] == "pending"
    assert [a["reviewer"] for a in after_edit["approvals"]] == ["rob"]
    assert after_edit["approved_args"] == edited
    # rita approved the old payload; the edited one is new to her, so she may approve it
    # (naming the edited card she is shown now: approvals/seen.py).
    final = approve(reviewer_http, approval, payload_hash=payload_hash(edited))
    assert (final["status"], final["approved_args"]) == ("approved", edited)
    assert resume(api, run_id, approval, edited).status_code == 200


def test_the_editor_cannot_approve_their_own_edit_again(signing, reviewer_http):
    _, approval = signing
    edited = {**SIGNATURE, "signer": "Dr. Adeyemi"}
    approve(reviewer_http, approval, edited_args=edited)
    refused = decide(reviewer_http, approval, {"approved": True, "payload_hash": payload_hash(edited)})
    assert refused.json()["error"] == "already_approved_by_you"


def test_each_step_is_audited(signing, reviewer_http, rob_http):
    _, approval = signing
    approve(reviewer_http, approval)
    approve(rob_http, approval)
    rows = AuditEvent.objects.filter(kind="decision", approval_id=approval).order_by("id")
    assert [(row.actor, row.decision) for row in rows] == [("user:rita", "approval_counted"), ("user:rob", "approved")]
    assert rows[0].data["approvals"] == 1 and rows[0].data["approvals_required"] == 2


def test_the_card_shows_the_count_live(signing, reviewer_http):
    _, approval = signing
    approve(reviewer_http, approval)
    pushed = RunEvent.objects.get(kind="approval.counted").inbox
    assert pushed["type"] == "card.updated"
    assert (pushed["card"]["approvals_required"], len(pushed["card"]["approvals"])) == (2, 1)


def test_a_single_approval_tool_is_approved_at_once(api, reviewer_http):
    approval = suspend(api, open_executing_run(api))["id"]
    answer = approve(reviewer_http, approval)
    assert (answer["status"], answer["approvals_required"]) == ("approved", 1)


def test_register_tool_sets_the_quorum(api, reviewer_http):
    call_command("register_tool", "order_blood", "--class", "mutate", "--tier", "high", "--approvals-required", "3")
    assert ToolDescriptor.objects.get(name="order_blood").approvals_required == 3
    approval = suspend(api, open_executing_run(api), tool="order_blood", args={"units": 2})
    assert approval["approvals_required"] == 3


def test_a_registry_row_cannot_lower_the_catalogs_quorum(api):
    call_command("register_tool", "sign_document", "--class", "mutate", "--tier", "high")
    approval = suspend(api, open_executing_run(api), tool="sign_document", op="sign", args=SIGNATURE)
    assert approval["approvals_required"] == 2


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_sixteen_concurrent_second_approvals_approve_it_exactly_once(api, rita):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id, tool="sign_document", op="sign", args=SIGNATURE)["id"]
    approve(logged_in(rita), approval)
    browsers = [logged_in(person(f"reviewer{n}", "reviewers")) for n in range(16)]

    def second(http):
        response = decide(http, approval, {"approved": True})
        return response.status_code, response.json().get("status") or response.json()["error"]

    answers = all_at_once([lambda http=http: second(http) for http in browsers])
    assert sorted(answers) == [(200, "approved")] + [(409, "approval_not_pending")] * 15
    assert len(decision_chunks(approval)) == 1
    assert Approval.objects.get(pk=approval).status == "approved"
