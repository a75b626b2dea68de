"""Declining a clarification: `{approved: false, reason}` is a rejection like an approval card's (SPEC section 4)."""

import pytest

from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import approval_row, asked_run, assert_still_waiting, clarify, decide, resume, suspend
from tests.helpers.http import error_of
from tests.helpers.runs import open_executing_run, run_state

ROUTE = [{"name": "route", "hint": {"options": ["oral", "iv"], "label": "Route"}}]
DECLINE = {"approved": False, "reason": "Route is for the prescriber to decide, not the ward."}


@pytest.fixture
def asked(api):
    """(run id, approval) for a clarification waiting for a reviewer."""
    return asked_run(api, ROUTE)


def test_declining_denies_the_question_and_the_run_executes_again(asked, reviewer_http):
    run_id, approval = asked
    response = decide(reviewer_http, approval["id"], DECLINE)
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["decision_reason"], body["decided_by"]) == ("rejected", DECLINE["reason"], "rita")
    assert run_state(run_id) == ("executing", "")


def test_declining_leaves_the_other_pending_approvals_of_the_run_pending(asked, api, reviewer_http):
    run_id, approval = asked
    sibling = suspend(
        api,
        run_id,
        tool="submit_billing_claim",
        op="submit",
        args={"claim_id": "c-7"},
        tool_call_id="call-2",
        step_id="step-2",
    )
    decide(reviewer_http, approval["id"], DECLINE)
    assert approval_row(sibling["id"]).status == "pending"
    assert run_state(run_id) == ("suspended", "")


def test_declining_with_stop_run_ends_the_run_and_withdraws_the_others(asked, api, reviewer_http):
    run_id, approval = asked
    sibling = suspend(
        api,
        run_id,
        tool="submit_billing_claim",
        op="submit",
        args={"claim_id": "c-7"},
        tool_call_id="call-2",
        step_id="step-2",
    )
    decide(reviewer_http, approval["id"], {**DECLINE, "stop_run": True})
    assert approval_row(sibling["id"]).status == "withdrawn"
    assert run_state(run_id) == ("aborted", "approval_denied")


def test_the_stream_denies_the_clarified_tool_call(asked, reviewer_http):
    run_id, approval = asked
    decide(reviewer_http, approval["id"], DECLINE)
    chunks = [chunk for event in RunEvent.objects.filter(run_id=run_id) for chunk in event.frames]
    assert [chunk["type"] for chunk in chunks] == [
        "tool-input-available",
        "data-clarification",
        "data-approval-decision",
        "tool-output-denied",
    ]
    assert chunks[-1] == {"type": "tool-output-denied", "toolCallId": "call-1"}


def test_the_inbox_is_told_the_card_was_rejected_by_the_reviewer(asked, reviewer_http):
    run_id, approval = asked
    decide(reviewer_http, approval["id"], DECLINE)
    event = RunEvent.objects.get(run_id=run_id, kind="approval.rejected")
    assert event.inbox == {
        "type": "card.removed",
        "id": approval["id"],
        "status": "rejected",
        "decided_by": "rita",
        "run_id": run_id,
        "tool": "prescribe_medication",
        "op": "",
        "care_unit": "",
    }


def test_a_decline_is_audited_with_the_reviewer(asked, reviewer_http, rita):
    _, approval = asked
    decide(reviewer_http, approval["id"], DECLINE)
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.DECISION)
    assert (row.actor_user, row.actor, row.decision) == (rita, "user:rita", "rejected")
    assert (row.data["reason"], row.data["reason_code"]) == (DECLINE["reason"], "clarification")


def test_a_declined_clarification_cannot_be_resumed(asked, api, reviewer_http):
    run_id, approval = asked
    decide(reviewer_http, approval["id"], DECLINE)
    assert resume(api, run_id, approval["id"]).json()["error"] == "approval_rejected"


@pytest.mark.parametrize(
    "body", [{"approved": False}, {"approved": False, "reason": "  "}], ids=["no-reason", "blank-reason"]
)
def test_a_decline_needs_a_reason_and_changes_nothing(asked, reviewer_http, body):
    run_id, approval = asked
    response = decide(reviewer_http, approval["id"], body)
    assert error_of(response) == (400, "invalid_payload")
    assert_still_waiting(run_id, approval)
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.DECISION).exists()
    assert not RunEvent.objects.filter(run_id=run_id, kind="approval.rejected").exists()


@pytest.mark.parametrize("body", [{"approved": True}, {"approved": True, "reason": "Fine as it is."}])
def test_approving_a_clarification_is_a_schema_rejection(asked, reviewer_http, body):
    run_id, approval = asked
    response = decide(reviewer_http, approval["id"], body)
    assert error_of(response) == (422, "resume_schema_rejected")
    assert run_state(run_id) == ("failed", "resume_schema_rejected")


@pytest.mark.parametrize(
    "body",
    [{**DECLINE, "reason": 42}, {**DECLINE, "values": {"route": "oral"}}],
    ids=["reason-not-a-string", "decline-and-answer"],
)
def test_a_decline_the_rejection_schema_refuses_fails_the_run(asked, reviewer_http, body):
    run_id, approval = asked
    response = decide(reviewer_http, approval["id"], body)
    assert error_of(response) == (422, "resume_schema_rejected")
    assert run_state(run_id) == ("failed", "resume_schema_rejected")


def test_a_form_field_named_approved_is_an_answer_not_a_decline(api, reviewer_http):
    run_id = open_executing_run(api)
    asked = clarify(api, run_id, [{"name": "approved", "type": "boolean"}]).json()["approval"]
    response = decide(reviewer_http, asked["id"], {"values": {"approved": False}})
    assert (response.status_code, response.json()["status"]) == (200, "approved")
    assert run_state(run_id) == ("suspended", "")


def test_an_api_key_cannot_decline(asked, other_api):
    run_id, approval = asked
    response = other_api.post(f"/api/v1/approvals/{approval['id']}/decision/", DECLINE, format="json")
    assert response.status_code == 403
    assert run_state(run_id) == ("suspended", "")
