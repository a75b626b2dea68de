"""One real object per URL parameter, owned by the client whose key `api` carries.

`FACTORIES` maps each /api/v1/ path parameter name to a builder: `(api, ids) -> value`,
where `ids` holds the values already built for the parameters to its left in the same
URL (`runs/<run_id>/tool-calls/<tool_call_id>/…` builds the run first). An endpoint
with a new parameter name needs one line here; the cross-client matrix fails until it
has it. Everything goes through the API, as the agent runtime would.
"""

import itertools

from tests.helpers.approval_loop import CHART_READ, gate, suspend
from tests.helpers.http import post
from tests.helpers.runs import make_session, open_executing_run, open_run, transition

_calls = itertools.count(1)


def _executing_run(api, ids) -> str:
    """In the URL's own session when it names one (`sessions/<session_id>/runs/<run_id>/…`)."""
    if "session_id" not in ids:
        return open_executing_run(api)
    run_id = open_run(api, ids["session_id"])["id"]
    assert transition(api, run_id, "executing").status_code == 200
    return run_id


def _run(api, ids) -> str:
    return ids.get("run_id") or _executing_run(api, ids)


def _allowed_tool_call(api, ids) -> str:
    """A low-tier read the gate lets through: it may report a result."""
    tool_call_id = f"read-{next(_calls)}"
    response = gate(
        api,
        ids["run_id"],
        tool="get_patient_summary",
        op="",
        args=CHART_READ,
        tool_call_id=tool_call_id,
        step_id=tool_call_id,
    )
    assert response.status_code == 200, response.content
    return tool_call_id


def _pending_approval(api, ids) -> str:
    tool_call_id = f"rx-{next(_calls)}"
    return suspend(api, _run(api, ids), tool_call_id=tool_call_id, step_id=tool_call_id)["id"]


def _session(api, ids) -> str:
    return ids.get("session_id") or make_session(api, title="Owned")["id"]


def _message(api, ids) -> str:
    response = post(
        api,
        f"/api/v1/sessions/{_session(api, ids)}/messages/",
        {"role": "user", "parts": [{"type": "text", "text": "Owned."}]},
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _pinned_card(api, ids) -> str:
    response = post(
        api, f"/api/v1/sessions/{_session(api, ids)}/pinned-cards/", {"kind": "note", "title": "Owned", "data": {}}
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


FACTORIES = {
    "session_id": lambda api, ids: make_session(api, title="Owned")["id"],
    "run_id": _executing_run,
    "tool_call_id": _allowed_tool_call,
    "approval_id": _pending_approval,
    "message_id": _message,
    "card_id": _pinned_card,
}


def session_of(ids: dict) -> str:
    """The session the objects built for one URL belong to (the run's, or the approval's)."""
    from approvals.models import Approval
    from runs.models import Run

    if "session_id" in ids:
        return ids["session_id"]
    if "run_id" in ids:
        return str(Run.objects.values_list("session_id", flat=True).get(pk=ids["run_id"]))
    return str(Approval.objects.values_list("session_id", flat=True).get(pk=ids["approval_id"]))


def build_owned(api, parameters: list[str]) -> dict:
    """Values for `parameters` (in URL order), each a real object of `api`'s client."""
    ids = {}
    for name in parameters:
        assert name in FACTORIES, (
            f"no factory for parameter {name}: add one line to FACTORIES in tests/owned_objects.py"
        )
        ids[name] = FACTORIES[name](api, ids)
    return ids
