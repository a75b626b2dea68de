"""Sessions, their messages and runs, driven through the real API (a run to any state).

Every helper goes through the same doors an agent runtime uses, so a run that reaches
`suspended` has really been parked by the policy gate.
"""

from runs.models import Run, RunEvent
from tests.helpers.http import post

# How a test reaches each terminal state by closing (any reason of that state would do).
CLOSE_REASON_FOR = {"completed": "completed", "failed": "error", "aborted": "user_stopped"}


def make_session(api, **body) -> dict:
    response = post(api, "/api/v1/sessions/", body)
    assert response.status_code == 201, response.json()
    return response.json()


def append(api, session_id, role="user", parts=None, **extra):
    """Append a message to the session's conversation."""
    body = {"role": role, "parts": parts if parts is not None else [{"type": "text", "text": "Hello"}], **extra}
    return post(api, f"/api/v1/sessions/{session_id}/messages/", body)


def open_run(api, session_id, **body) -> dict:
    response = post(api, f"/api/v1/sessions/{session_id}/runs/", body)
    assert response.status_code == 201, response.json()
    return response.json()


def transition(api, run_id, to):
    return post(api, f"/api/v1/runs/{run_id}/transition/", {"to": to})


def close(api, run_id, reason: str, **extra):
    return post(api, f"/api/v1/runs/{run_id}/close/", {"reason": reason, **extra})


def open_executing_run(api, **session_fields) -> str:
    """A new session for `api`'s client with one run already executing. Returns the run id."""
    run = open_run(api, make_session(api, **session_fields)["id"])
    _ok(transition(api, run["id"], "executing"))
    return run["id"]


def make_run(api, state: str = "pending", *, session_id=None) -> dict:
    """Open a run (in a new session unless given) and drive it to `state` through the API."""
    from tests.helpers.approval_loop import park  # parking is the approval loop's; it needs a run first

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


def run_state(run_id) -> tuple[str, str]:
    run = Run.objects.get(pk=run_id)
    return run.state, run.terminal_reason


def event_kinds(run_id) -> list[str]:
    return list(RunEvent.objects.filter(run_id=run_id).values_list("kind", flat=True))
