"""The approval loop over HTTP: gate a call, park it, decide, resume, clarify, report a result."""

import itertools

from approvals.models import Approval, ToolCall
from audit.models import AuditEvent
from tests.helpers.http import post, post_json, raw_post
from tests.helpers.runs import open_executing_run, run_state

# A high-tier mutation: the static registry says it always needs a human.
PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}
CHART_READ = {"patient_id": "p-1042"}

_steps = itertools.count(1)


def gate(
    api,
    run_id,
    *,
    tool="prescribe_medication",
    args=None,
    step_id="step-1",
    tool_call_id="call-1",
    op="create",
    **extra,
):
    body = {
        "tool_call_id": tool_call_id,
        "step_id": step_id,
        "tool": tool,
        "op": op,
        "args": PRESCRIPTION if args is None else args,
        **extra,
    }
    return post(api, f"/api/v1/runs/{run_id}/tool-calls/", body)


def raw_gate(api, run_id, fields: str):
    """A search_patients tool call whose body is written out, `fields` after its ids: to send
    what the JSON encoder never would."""
    body = f'{{"tool_call_id": "call-1", "step_id": "step-1", "tool": "search_patients", {fields}}}'
    return raw_post(api, f"/api/v1/runs/{run_id}/tool-calls/", body)


def assert_nothing_gated() -> None:
    """Refused before the gate: no tool call stored, no verdict audited."""
    assert not ToolCall.objects.exists()
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.VERDICT).exists()


def suspend(api, run_id, **call) -> dict:
    """Gate a call that needs approval; returns the approval the 202 answer carries."""
    response = gate(api, run_id, **call)
    assert response.status_code == 202, response.content
    assert response.json()["decision"] == "suspended"
    return response.json()["approval"]


def park(api, run_id, **call) -> dict:
    """`suspend` under a fresh step and tool call id, so one run can park again and again."""
    step = next(_steps)
    return suspend(api, run_id, step_id=f"step-{step}", tool_call_id=f"call-{step}", **call)


def parked_run(api, session: dict | None = None, **call) -> tuple[str, dict]:
    """A new executing run (its session made with `session`) with `call` parked: (run id, approval)."""
    run_id = open_executing_run(api, **(session or {}))
    return run_id, suspend(api, run_id, **call)


def clarify(
    api,
    run_id,
    missing,
    *,
    step_id="step-1",
    tool_call_id="call-1",
    tool="prescribe_medication",
    args=None,
    message="Which route should the antibiotic take?",
    **extra,
):
    body = {
        "tool_call_id": tool_call_id,
        "step_id": step_id,
        "tool": tool,
        "message": message,
        "missing": missing,
        "args": PRESCRIPTION if args is None else args,
        **extra,
    }
    return post(api, f"/api/v1/runs/{run_id}/clarifications/", body)


def asked_run(api, missing, *, session: dict | None = None, **call) -> tuple[str, dict]:
    """A new executing run (its session made with `session`) whose agent asked a reviewer for
    `missing` fields: (run id, approval)."""
    run_id = open_executing_run(api, **(session or {}))
    response = clarify(api, run_id, missing, **call)
    assert response.status_code == 202, response.content
    return run_id, response.json()["approval"]


def decide(http, approval_id, body, **kwargs):
    """A logged-in reviewer's decision (`csrf=False` leaves the token out)."""
    return post_json(http, f"/api/v1/approvals/{approval_id}/decision/", body, **kwargs)


def approve(http, approval_id, **extra) -> dict:
    response = decide(http, approval_id, {"approved": True, **extra})
    assert response.status_code == 200, response.content
    return response.json()


def resume(api, run_id, approval_id, args=None, *, key=None):
    """The agent resumes with `args` (the prescription unless given), under an Idempotency-Key if given."""
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    body = {"approval_id": str(approval_id), "args": PRESCRIPTION if args is None else args}
    return api.post(f"/api/v1/runs/{run_id}/resume/", body, format="json", **headers)


def report(api, run_id, tool_call_id, output=None, **extra):
    """The agent reports what a tool call returned."""
    return post(api, f"/api/v1/runs/{run_id}/tool-calls/{tool_call_id}/result/", {"output": output, **extra})


def approval_row(approval_id) -> Approval:
    return Approval.objects.get(pk=approval_id)


def assert_still_waiting(run_id, approval) -> None:
    """Nothing was decided: the call's approval is pending and its run suspended on it."""
    assert approval_row(approval["id"]).status == "pending"
    assert run_state(run_id) == ("suspended", "")
