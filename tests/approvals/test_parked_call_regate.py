"""A parked call gated again after its verdict changed stays parked (SPEC sections 4 and 5).

A parked toolCallId's approval request stays its last word until a human decides: a later
verdict (a registry edit, a client that can no longer park) neither settles it nor adds an
error chunk for it. Its approval answers, as the same suspend sent again is answered.

Personas: the ward agent's key in `api`, rita the reviewer in `reviewer_http`.
"""

from approvals.models import ApiClient, AuditEvent, ToolCall, ToolDescriptor
from runs.models import RunEvent
from tests.helpers.approval_loop import decide, gate
from tests.helpers.runs import open_executing_run


def park(api) -> tuple[str, dict]:
    run_id = open_executing_run(api)
    response = gate(api, run_id)
    assert response.status_code == 202, response.content
    return run_id, response.json()["approval"]


def prescriptions_become_reads() -> None:
    """A governance edit after the park: the tool is now a read, which the policy allows."""
    ToolDescriptor.objects.update_or_create(name="prescribe_medication",
                                            defaults={"policy_class": "read", "hitl_tier": None})


def frame_types(run_id, tool_call_id="call-1") -> list[str]:
    return [chunk["type"] for event in RunEvent.objects.filter(run_id=run_id).order_by("id")
            for chunk in event.frames if chunk.get("toolCallId") == tool_call_id]


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
        "suspended", "mutate.high-tier-always-approval", approval["id"])
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


def test_a_new_call_of_the_same_tool_takes_the_new_verdict(api, catalog):
    # Only the parked toolCallId keeps its card: a new proposal is judged as it is now.
    run_id, _ = park(api)
    prescriptions_become_reads()
    response = gate(api, run_id, tool_call_id="call-2")
    assert (response.status_code, response.json()["rule_id"]) == (200, "read.allow")
