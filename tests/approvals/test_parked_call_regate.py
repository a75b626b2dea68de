"""A parked call gated again after its verdict changed stays parked (SPEC sections 4 and 5).

A parked toolCallId's approval request stays its last word until a human decides: a later
verdict (a registry edit, a client that can no longer park) neither settles it nor adds an
error chunk for it. Its approval answers, as the same suspend sent again is answered.

Personas: the ward agent's key in `api`, rita the reviewer in `reviewer_http`.
"""

from datetime import timedelta

from django.test import override_settings
from django.utils import timezone

from agents.models import ApiClient
from approvals.expiry import expire_due
from approvals.models import Approval, ToolCall
from audit.models import AuditEvent
from registry.models import ToolDescriptor
from runs.models import RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, approval_row, approve, decide, gate, resume
from tests.helpers.runs import open_executing_run


def park(api) -> tuple[str, dict]:
    run_id = open_executing_run(api)
    response = gate(api, run_id)
    assert response.status_code == 202, response.content
    return run_id, response.json()["approval"]


def prescriptions_become_reads() -> None:
    """A governance edit after the park: the tool is now a read, which the policy allows."""
    ToolDescriptor.objects.update_or_create(
        name="prescribe_medication", defaults={"policy_class": "read", "hitl_tier": None}
    )


def frame_types(run_id, tool_call_id="call-1") -> list[str]:
    return [
        chunk["type"]
        for event in RunEvent.objects.filter(run_id=run_id).order_by("id")
        for chunk in event.frames
        if chunk.get("toolCallId") == tool_call_id
    ]


def test_a_parked_call_whose_verdict_became_allow_gets_its_card_again(api, catalog):
    run_id, approval = park(api)
    prescriptions_become_reads()
    response = gate(api, run_id)
    assert response.status_code == 202, response.content
    assert (response.json()["decision"], response.json()["approval"]["id"]) == ("suspended", approval["id"])
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="call-1").decision == "suspended"
    assert frame_types(run_id) == ["tool-input-available", "tool-approval-request"]


def test_the_new_verdict_is_audited_with_the_card_that_answered_it(api, catalog):
    run_id, approval = park(api)
    prescriptions_become_reads()
    gate(api, run_id)
    row = AuditEvent.objects.filter(kind=AuditEvent.Kind.VERDICT, run_id=run_id).latest("id")
    assert (row.decision, row.rule_id, str(row.approval_id)) == (
        "suspended",
        "mutate.high-tier-always-approval",
        approval["id"],
    )
    assert (row.data["engine_rule_id"], row.data["parked_on"]) == ("read.allow", approval["id"])


def test_a_parked_call_whose_client_can_no_longer_park_gets_no_error_chunk(api, catalog):
    run_id, approval = park(api)
    client = ApiClient.objects.get(name="ward-agent")
    client.can_park = False
    client.save()  # as the admin saves it: the key cache forgets the client's old answer
    response = gate(api, run_id)
    assert (response.status_code, response.json()["approval"]["id"]) == (202, approval["id"])
    assert frame_types(run_id) == ["tool-input-available", "tool-approval-request"]


def test_a_rejected_call_stays_rejected_whatever_the_policy_now_says(api, catalog, reviewer_http):
    run_id, approval = park(api)
    assert decide(reviewer_http, approval["id"], {"approved": False, "reason": "Not this drug."}).status_code == 200
    prescriptions_become_reads()
    events = RunEvent.objects.filter(run_id=run_id).count()
    response = gate(api, run_id)
    assert (response.status_code, response.json()["error"]) == (409, "approval_rejected")
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="call-1").decision == "suspended"
    assert RunEvent.objects.filter(run_id=run_id).count() == events


def latest_verdict(run_id) -> AuditEvent:
    return AuditEvent.objects.filter(kind=AuditEvent.Kind.VERDICT, run_id=run_id).latest("id")


def test_a_refused_regate_of_a_parked_call_is_still_audited(api, catalog, reviewer_http):
    run_id, approval = park(api)
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Not this drug."})
    prescriptions_become_reads()
    assert gate(api, run_id).status_code == 409
    row = latest_verdict(run_id)
    assert (row.decision, str(row.approval_id), row.data["engine_rule_id"]) == (
        "approval_rejected",
        approval["id"],
        "read.allow",
    )


def test_an_expired_parked_call_gets_410(api, catalog):
    run_id, approval = park(api)
    expire_due(now=timezone.now() + timedelta(hours=1))
    prescriptions_become_reads()
    response = gate(api, run_id)
    assert (response.status_code, response.json()["error"]) == (410, "approval_expired")
    assert latest_verdict(run_id).decision == "approval_expired"


def test_an_approved_parked_call_gets_its_card_and_resumes(api, catalog, reviewer_http):
    run_id, approval = park(api)
    approve(reviewer_http, approval["id"])
    prescriptions_become_reads()
    response = gate(api, run_id)
    assert (response.status_code, response.json()["approval"]["status"]) == (202, "approved")
    assert resume(api, run_id, approval["id"]).status_code == 200
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="call-1").decision == "allow"


def test_another_cards_grant_does_not_settle_a_rejected_call(api, catalog, reviewer_http):
    # call-1 and call-2 propose the same prescription on two steps; the reviewer rejects one and
    # approves the other. call-1 gated again stays rejected, and call-2 keeps its grant.
    run_id = open_executing_run(api)
    first = gate(api, run_id, tool_call_id="call-1", step_id="step-1").json()["approval"]
    second = gate(api, run_id, tool_call_id="call-2", step_id="step-2").json()["approval"]
    decide(reviewer_http, first["id"], {"approved": False, "reason": "Not this drug."})
    approve(reviewer_http, second["id"])
    response = gate(api, run_id, tool_call_id="call-1", step_id="step-1")
    assert (response.status_code, response.json()["error"]) == (409, "approval_rejected")
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="call-1").decision == "suspended"
    assert approval_row(second["id"]).status == "approved"
    assert frame_types(run_id, "call-1")[-1] == "tool-output-denied"


def test_the_same_suspend_refused_is_audited(api, catalog, reviewer_http):
    # No change of verdict: the same prescription again after its rejection.
    run_id, approval = park(api)
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Not this drug."})
    assert gate(api, run_id).status_code == 409
    row = latest_verdict(run_id)
    assert (row.decision, row.rule_id) == ("approval_rejected", "mutate.high-tier-always-approval")


def test_a_verdict_refused_for_too_many_open_cards_is_audited(api, catalog):
    run_id, _ = park(api)
    with override_settings(CONDOR_MAX_PENDING_PER_CLIENT=1):
        response = gate(api, run_id, tool_call_id="call-2", step_id="step-2", args={**PRESCRIPTION, "days": 3})
    assert (response.status_code, response.json()["error"]) == (429, "too_many_pending")
    row = latest_verdict(run_id)
    assert (row.decision, row.data["tool_call_id"]) == ("too_many_pending", "call-2")
    assert not Approval.objects.filter(tool_call_id="call-2").exists()


def test_a_new_call_of_the_same_tool_takes_the_new_verdict(api, catalog):
    # Only the parked toolCallId keeps its card: a new proposal is judged as it is now.
    run_id, _ = park(api)
    prescriptions_become_reads()
    response = gate(api, run_id, tool_call_id="call-2")
    assert (response.status_code, response.json()["rule_id"]) == (200, "read.allow")
