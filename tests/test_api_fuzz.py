"""Schemathesis against /api/schema/: the server answers what its OpenAPI schema promises (SPEC section 9).

Every operation is fuzzed in-process through Django's WSGI application, with the
owner client's API key (and, for reviewer-only operations, rita's logged-in session
and CSRF token). Ids in paths and bodies point at real objects of that client most
of the time, so the handlers behind the 404 are exercised too. Checks: no 5xx, every
status code documented, the documented content type, the documented body.

Known exclusions, each owned by another branch of issue 9, are marked where they are made.
"""

from contextlib import contextmanager

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.helpers.approval_loop import CHART_READ, PRESCRIPTION, approve, clarify, gate, suspend
from tests.helpers.http import post
from tests.helpers.personas import logged_in
from tests.helpers.runs import close, make_session, open_run, transition

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]

# Bounded and reproducible: the same cases every run; 25 fuzzed per operation besides the
# coverage phase's boundary cases (about 1,000 requests, 1-2 minutes on a busy 2-core machine).
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 9,
        "generation": {
            "max-examples": 25,
            "deterministic": True,
            "database": "none",
            # NUL anywhere in a body is 400 invalid_payload (core/parsers.py), so it is fuzzed too.
            "allow-x00": True,
        },
    }
)

APP = get_wsgi_application()
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", APP, config=CONFIG)


class World:
    """Real objects of the owner client, as `{name: value}` combinations that belong together.

    Hooks are registered on the schema at import; the objects are made per test by the
    `world` fixture, so the hook reads them from here when it draws a case.
    """

    combos: list[dict] = []

    @classmethod
    def candidates(cls, operation) -> list[dict]:
        names = {parameter.name for parameter in operation.path_parameters}
        combos = [combo for combo in cls.combos if names <= set(combo)]
        if operation.path.endswith("/stream"):
            # Under WSGI the stream of a live run never ends (issue 9, item 7, another branch's):
            # only finished runs here; the live stream is tested under daphne in tests/live.
            combos = [combo for combo in combos if combo.get("finished")]
        return combos


def _build_world(api, reviewer_http) -> list[dict]:
    def executing():
        session = make_session(api, title="Fuzz")
        run = open_run(api, session["id"])
        assert transition(api, run["id"], "executing").status_code == 200
        return session["id"], run["id"]

    combos = []
    session = make_session(api, title="Fuzz, pending")
    combos.append({"session_id": session["id"], "run_id": open_run(api, session["id"])["id"]})

    session_id, run_id = executing()
    gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="read-1")
    combos.append({"session_id": session_id, "run_id": run_id, "tool_call_id": "read-1", "args": CHART_READ})

    session_id, run_id = executing()
    approval = suspend(api, run_id, tool_call_id="rx-1")
    combos.append(
        {
            "session_id": session_id,
            "run_id": run_id,
            "tool_call_id": "rx-1",
            "approval_id": approval["id"],
            "args": PRESCRIPTION,
        }
    )

    session_id, run_id = executing()
    approval = suspend(api, run_id, tool_call_id="rx-2")
    approve(reviewer_http, approval["id"])
    combos.append(
        {
            "session_id": session_id,
            "run_id": run_id,
            "tool_call_id": "rx-2",
            "approval_id": approval["id"],
            "args": PRESCRIPTION,
        }
    )

    session_id, run_id = executing()
    response = clarify(api, run_id, [{"name": "route", "hint": {"options": ["oral", "iv"]}}], tool_call_id="ask-1")
    assert response.status_code == 202, response.content
    combos.append(
        {
            "session_id": session_id,
            "run_id": run_id,
            "tool_call_id": "ask-1",
            "approval_id": response.json()["approval"]["id"],
            "values": {"route": "oral"},
        }
    )

    session_id, run_id = executing()
    close(api, run_id, "completed")
    combos.append({"session_id": session_id, "run_id": run_id, "finished": True})

    session_id = make_session(api, title="Fuzz, conversation")["id"]
    message = post(
        api,
        f"/api/v1/sessions/{session_id}/messages/",
        {"role": "user", "parts": [{"type": "text", "text": "Potassium?"}]},
    )
    card = post(api, f"/api/v1/sessions/{session_id}/pinned-cards/", {"kind": "note", "title": "Fuzz", "data": {}})
    assert (message.status_code, card.status_code) == (201, 201), (message.content, card.content)
    combos.append({"session_id": session_id, "message_id": message.json()["id"], "card_id": card.json()["id"]})
    return combos


@schema.hook
def flatmap_case(context, case):
    """Most cases get the ids (and matching body fields) of one real object set; the rest keep theirs."""
    candidates = World.candidates(context.operation)
    if not candidates:
        return st.just(case)
    return st.sampled_from([None, *candidates]).map(lambda combo: _with(case, combo))


def _with(case, combo):
    if combo is None:
        return case
    for name in case.path_parameters:
        case.path_parameters[name] = combo[name]
    if isinstance(case.body, dict):
        for name in set(case.body) & set(combo) - {"session_id", "run_id"}:
            case.body[name] = combo[name]
    return case


@contextmanager
def keeping_the_test_transaction():
    """As Django's test client does: the request must not close the connection holding the test's transaction."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(api, ward_agent, rita):
    reviewer_http = logged_in(rita)
    World.combos = _build_world(api, reviewer_http)
    answers = []
    yield {"key": ward_agent.raw_key, "reviewer": reviewer_http, "answers": answers}
    World.combos = []
    # Guard the guard: an operation on an object must have reached one, or it tested only the 404.
    # (OPTIONS and the other methods the coverage phase tries answer without looking.)
    reached = {status for operation, method, status in answers if method.lower() == operation.method.lower()}
    if answers and answers[0][0].path_parameters:
        assert reached - {401, 404, 405}, (
            f"{answers[0][0].label}: no case reached a real object; does _build_world make one for its parameters?"
        )


def credentials(case, world) -> dict:
    if case.operation.definition.raw.get("security") == [{"cookieAuth": []}]:
        reviewer = world["reviewer"]  # reviewer-only: rita's session, with the CSRF token the inbox sends
        return {
            "headers": {"X-CSRFToken": reviewer.cookies["csrftoken"].value},
            "cookies": {name: morsel.value for name, morsel in reviewer.cookies.items()},
        }
    return {"headers": {"Authorization": f"Api-Key {world['key']}"}}


@schema.parametrize()
# Serving the finished run's stream under WSGI drains it first (issue 9, item 7, another branch's).
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
def test_the_server_keeps_the_promises_of_its_schema(case, world):
    with keeping_the_test_transaction():
        response = case.call_and_validate(checks=CHECKS, **credentials(case, world))
    world["answers"].append((case.operation, case.method, response.status_code))
