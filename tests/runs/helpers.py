"""Driving sessions and runs through the real API, gate and decision included.

Every helper goes through the same doors an agent runtime or a reviewer uses,
so a test that reaches `suspended` has really been parked by the policy gate.
"""

import itertools
import json

from runs.models import Run, RunEvent

# A high-tier mutation: the static registry says it always needs a human.
HIGH_TIER_TOOL = "prescribe_medication"
HIGH_TIER_ARGS = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral"}

# How a test reaches each terminal state by closing (any reason of that state would do).
CLOSE_REASON_FOR = {"completed": "completed", "failed": "error", "aborted": "user_stopped"}

_steps = itertools.count(1)


def post(api, path: str, body: dict | None = None):
    return api.post(path, body or {}, format="json")


def make_session(api, **body) -> dict:
    response = post(api, "/api/v1/sessions/", body)
    assert response.status_code == 201, response.json()
    return response.json()


def open_run(api, session_id, **body) -> dict:
    response = post(api, f"/api/v1/sessions/{session_id}/runs/", body)
    assert response.status_code == 201, response.json()
    return response.json()


def transition(api, run_id, to):
    return post(api, f"/api/v1/runs/{run_id}/transition/", {"to": to})


def close(api, run_id, reason: str, **extra):
    return post(api, f"/api/v1/runs/{run_id}/close/", {"reason": reason, **extra})


def park(api, run_id, *, args: dict | None = None) -> dict:
    """POST a high-tier tool call; the gate must answer 202 suspended. Returns the approval."""
    step = next(_steps)
    response = post(api, f"/api/v1/runs/{run_id}/tool-calls/", {
        "tool_call_id": f"call-{step}", "step_id": f"step-{step}", "tool": HIGH_TIER_TOOL, "op": "create",
        "args": args if args is not None else HIGH_TIER_ARGS,
    })
    assert response.status_code == 202, response.json()
    assert response.json()["decision"] == "suspended"
    return response.json()["approval"]


def decide(reviewer_http, approval_id, body: dict):
    """A logged-in reviewer's decision through the decision endpoint (CSRF token included)."""
    return reviewer_http.post(
        f"/api/v1/approvals/{approval_id}/decision/", json.dumps(body), content_type="application/json",
        HTTP_X_CSRFTOKEN=reviewer_http.cookies["csrftoken"].value,
    )


def resume(api, run_id, approval: dict, args: dict | None = None):
    return post(api, f"/api/v1/runs/{run_id}/resume/", {
        "approval_id": approval["id"], "args": args if args is not None else approval["args"],
    })


def make_run(api, state: str = "pending", *, session_id=None) -> dict:
    """Open a run (in a new session unless given) and drive it to `state` through the API."""
    if session_id is None:
        session_id = make_session(api, title="Ward round")["id"]
    run = open_run(api, session_id)
    if state == "pending":
        return run
    if state == "planning":
        return _ok(transition(api, run["id"], "planning"))
    run = _ok(transition(api, run["id"], "executing"))
    if state == "executing":
        return run
    if state == "suspended":
        park(api, run["id"])
        return _ok(api.get(f"/api/v1/runs/{run['id']}/"))
    return _ok(close(api, run["id"], CLOSE_REASON_FOR[state]))


def _ok(response) -> dict:
    assert response.status_code == 200, response.json()
    return response.json()


def stored_state(run_id) -> str:
    return Run.objects.get(pk=run_id).state


def event_kinds(run_id) -> list[str]:
    return list(RunEvent.objects.filter(run_id=run_id).values_list("kind", flat=True))
