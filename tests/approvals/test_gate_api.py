"""POST runs/{id}/tool-calls/: the one choke point (SPEC sections 2, 4 and 9)."""

import pytest

from agents.models import ApiClientKey
from approvals.models import Approval, ToolCall
from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import CHART_READ, PRESCRIPTION, gate
from tests.helpers.http import raw_post
from tests.helpers.personas import agent, api_for
from tests.helpers.runs import open_executing_run, run_state

EMAIL = {"host": "smtp.clinic.example", "to": "pt@example.org", "body": "Your results are in."}


def verdict_rows(run_id):
    return AuditEvent.objects.filter(kind=AuditEvent.Kind.VERDICT, run_id=run_id)


def test_a_read_is_allowed_with_its_rule(api):
    run_id = open_executing_run(api)
    response = gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ)
    assert response.status_code == 200
    assert response.json()["decision"] == "allow"
    assert response.json()["rule_id"] == "read.allow"
    assert run_state(run_id) == ("executing", "")


def test_an_allowed_call_leaves_an_audit_row_with_its_rule(api):
    run_id = open_executing_run(api)
    gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ)
    row = verdict_rows(run_id).get()
    assert (row.decision, row.rule_id, row.tool) == ("allow", "read.allow", "get_patient_summary")
    assert row.actor == "client:ward-agent"


def test_a_blocked_call_answers_200_and_is_audited(api):
    # The default session is of unknown age, decided as a child: comms are blocked.
    run_id = open_executing_run(api)
    response = gate(api, run_id, tool="send_email", op="send", args=EMAIL)
    assert response.status_code == 200
    assert (response.json()["decision"], response.json()["rule_id"]) == ("blocked", "comms.child-blocked")
    assert verdict_rows(run_id).get().rule_id == "comms.child-blocked"
    assert not Approval.objects.exists()


def test_a_call_needing_approval_parks_the_run(api):
    run_id = open_executing_run(api)
    response = gate(api, run_id)
    assert response.status_code == 202
    body = response.json()
    assert (body["decision"], body["rule_id"]) == ("suspended", "mutate.high-tier-always-approval")
    assert body["approval"]["status"] == "pending"
    assert body["approval"]["args"] == PRESCRIPTION
    assert run_state(run_id) == ("suspended", "")


def test_the_suspended_answer_carries_the_approval_frames(api):
    run_id = open_executing_run(api)
    body = gate(api, run_id).json()
    assert body["frames"] == [
        {
            "type": "tool-input-available",
            "toolCallId": "call-1",
            "toolName": "prescribe_medication",
            "input": PRESCRIPTION,
        },
        {"type": "tool-approval-request", "approvalId": body["approval"]["id"], "toolCallId": "call-1"},
    ]


def test_a_suspend_verdict_is_audited_with_its_rule(api):
    run_id = open_executing_run(api)
    approval = gate(api, run_id).json()["approval"]
    row = verdict_rows(run_id).get()
    assert (row.decision, row.rule_id) == ("require_approval", "mutate.high-tier-always-approval")
    suspend_row = AuditEvent.objects.get(kind=AuditEvent.Kind.SUSPEND)
    assert str(suspend_row.approval_id) == approval["id"]


def test_the_tool_call_ledger_records_the_verdict(api):
    run_id = open_executing_run(api)
    gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="read-1")
    call = ToolCall.objects.get(tool_call_id="read-1")
    assert (call.decision, call.rule_id, call.args) == ("allow", "read.allow", CHART_READ)


@pytest.mark.parametrize("state", ["pending", "planning"])
def test_a_run_that_is_not_executing_is_not_gated(api, state):
    session = api.post("/api/v1/sessions/", {}, format="json").json()
    run_id = api.post(f"/api/v1/sessions/{session['id']}/runs/", {}, format="json").json()["id"]
    if state == "planning":
        api.post(f"/api/v1/runs/{run_id}/transition/", {"to": "planning"}, format="json")
    response = gate(api, run_id)
    assert response.status_code == 409
    assert response.json()["error"] == "run_not_active"
    assert not ToolCall.objects.exists()


def test_a_closed_run_is_not_gated(api):
    run_id = open_executing_run(api)
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "completed"}, format="json")
    response = gate(api, run_id)
    assert (response.status_code, response.json()["error"]) == (409, "run_not_active")
    assert not Approval.objects.exists()


def test_another_clients_run_is_not_found(api, other_api):
    run_id = open_executing_run(api)
    response = gate(other_api, run_id)
    assert (response.status_code, response.json()["error"]) == (404, "not_found")
    assert not ToolCall.objects.exists()


def test_a_call_without_an_api_key_is_refused(api, client):
    run_id = open_executing_run(api)
    response = client.post(f"/api/v1/runs/{run_id}/tool-calls/", {}, content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (401, "not_authenticated")
    assert not ToolCall.objects.exists()


# --- clients that cannot park (SPEC section 4) ------------------------------------------


@pytest.fixture
def hurried_api(db):
    """`create_api_client --cannot-park`: an agent with no way to wait for a human."""
    return api_for(agent("batch-agent", can_park=False))


def test_a_client_that_cannot_park_gets_blocked_instead_of_a_suspend(hurried_api):
    run_id = open_executing_run(hurried_api)
    response = gate(hurried_api, run_id)
    assert response.status_code == 200
    assert (response.json()["decision"], response.json()["rule_id"]) == ("blocked", "client.cannot-park")
    assert not Approval.objects.exists()
    assert run_state(run_id) == ("executing", "")


def test_a_cannot_park_block_is_audited_with_its_rule(hurried_api):
    run_id = open_executing_run(hurried_api)
    gate(hurried_api, run_id)
    row = verdict_rows(run_id).get()
    assert (row.decision, row.rule_id) == ("blocked", "client.cannot-park")
    assert row.data["engine_rule_id"] == "mutate.high-tier-always-approval"


def test_a_client_that_cannot_park_still_gets_allowed_calls(hurried_api):
    run_id = open_executing_run(hurried_api)
    response = gate(hurried_api, run_id, tool="get_patient_summary", op="", args=CHART_READ)
    assert response.json()["decision"] == "allow"


def test_the_cannot_park_key_is_a_working_key(hurried_api):
    # Guards the fixture: the block above comes from can_park, not from a broken key.
    assert ApiClientKey.objects.filter(client__name="batch-agent").exists()
    assert hurried_api.post("/api/v1/sessions/", {}, format="json").status_code == 201


# --- strict bodies ------------------------------------------------------------------------

GOOD = '{"tool_call_id": "c1", "step_id": "s1", "tool": "prescribe_medication", "args": %s}'


@pytest.mark.parametrize(
    "raw",
    [
        GOOD % '{"dose": "500 mg", "dose": "5 g"}',
        GOOD % '{"dose": NaN}',
        GOOD % '{"dose": Infinity}',
        GOOD % '{"units": 9007199254740992}',
        GOOD % '{"units": -9007199254740992}',
        GOOD % '{"dose": 1e400}',
        GOOD % '["not", "an", "object"]',
        '["not an object"]',
        '"a string"',
        "{not json",
        '{"tool_call_id": "c1", "step_id": "s1", "tool": "prescribe_medication", "args": {}, "urgent": true}',
        '{"step_id": "s1", "tool": "prescribe_medication", "args": {}}',
    ],
    ids=[
        "duplicate-key",
        "nan",
        "infinity",
        "2**53",
        "-2**53",
        "overflowing-float",
        "args-not-object",
        "body-array",
        "body-string",
        "malformed",
        "unknown-field",
        "missing-field",
    ],
)
def test_a_malformed_body_is_refused_and_nothing_is_stored(api, raw):
    run_id = open_executing_run(api)
    response = raw_post(api, f"/api/v1/runs/{run_id}/tool-calls/", raw)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
    assert not ToolCall.objects.exists()
    assert not Approval.objects.exists()
    assert run_state(run_id) == ("executing", "")


def test_the_largest_safe_integer_is_accepted(api):
    run_id = open_executing_run(api)
    response = raw_post(api, f"/api/v1/runs/{run_id}/tool-calls/", GOOD % '{"units": 9007199254740991}')
    assert response.status_code == 202


# --- a tool call id names one call ---------------------------------------------------------------


@pytest.mark.parametrize(
    "other",
    [
        {"args": {**PRESCRIPTION, "dose": "1 g"}},
        {"op": "delete"},
        {"tool": "change_medication"},
        {"tool": "send_email", "op": "send", "args": EMAIL},
    ],
    ids=["other-args", "other-op", "other-tool", "a-blocked-call"],
)
def test_regating_a_call_id_with_another_call_is_a_conflict(api, other):
    run_id = open_executing_run(api)
    approval = gate(api, run_id).json()["approval"]
    events = RunEvent.objects.filter(run_id=run_id).count()
    response = gate(api, run_id, **other)
    assert (response.status_code, response.json()["error"]) == (409, "tool_call_conflict")
    assert RunEvent.objects.filter(run_id=run_id).count() == events
    call = ToolCall.objects.get(run_id=run_id, tool_call_id="call-1")
    assert (call.tool, call.op, call.args, call.decision) == (
        "prescribe_medication",
        "create",
        PRESCRIPTION,
        "suspended",
    )
    assert [str(pk) for pk in Approval.objects.values_list("id", flat=True)] == [approval["id"]]
    assert verdict_rows(run_id).count() == 1


def test_a_parked_calls_approval_request_stays_its_last_frame(api):
    # SPEC section 5: no error chunk for a parked toolCallId before the human decides.
    run_id = open_executing_run(api)  # unknown age: send_email would be blocked with an error chunk
    gate(api, run_id)
    gate(api, run_id, tool="send_email", op="send", args=EMAIL)
    chunks = [
        chunk
        for event in RunEvent.objects.filter(run_id=run_id)
        for chunk in event.frames
        if chunk.get("toolCallId") == "call-1"
    ]
    assert [chunk["type"] for chunk in chunks] == ["tool-input-available", "tool-approval-request"]


def test_regating_the_same_call_is_a_retry_with_the_same_approval(api):
    run_id = open_executing_run(api)
    first = gate(api, run_id).json()["approval"]
    response = gate(api, run_id, args=dict(reversed(list(PRESCRIPTION.items()))))
    assert response.status_code == 202
    assert response.json()["approval"]["id"] == first["id"]
    assert ToolCall.objects.filter(run_id=run_id).count() == 1
