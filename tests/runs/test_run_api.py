"""The run endpoints: owner-scoped (another client's run is 404), strict bodies, stable error codes."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from runs.models import Run
from tests.helpers.http import error_of, post
from tests.helpers.runs import close, event_kinds, make_run, make_session, stored_state, transition


def test_get_answers_the_run(api):
    run = make_run(api, "planning")

    body = api.get(f"/api/v1/runs/{run['id']}/").json()

    assert {key: body[key] for key in ("id", "state", "terminal_reason", "session", "autonomy")} == {
        "id": run["id"],
        "state": "planning",
        "terminal_reason": None,
        "session": run["session"],
        "autonomy": "guarded",
    }


def test_another_clients_run_is_404(api, other_api):
    run = make_run(api, "pending")

    response = other_api.get(f"/api/v1/runs/{run['id']}/")

    assert error_of(response) == (404, "not_found")


def test_an_unknown_run_is_404(api):
    assert api.get(f"/api/v1/runs/{uuid.uuid4()}/").status_code == 404


def test_opening_a_run_in_another_clients_session_is_404_and_opens_nothing(api, other_api):
    session = make_session(api)

    response = post(other_api, f"/api/v1/sessions/{session['id']}/runs/")

    assert response.status_code == 404
    assert not Run.objects.filter(session_id=session["id"]).exists()


def test_opening_a_run_in_another_clients_session_supersedes_nothing(api, other_api):
    run = make_run(api, "executing")

    post(other_api, f"/api/v1/sessions/{run['session']}/runs/")

    assert stored_state(run["id"]) == "executing"


def test_another_client_cannot_transition_the_run(api, other_api):
    run = make_run(api, "pending")

    response = transition(other_api, run["id"], "executing")

    assert response.status_code == 404
    assert stored_state(run["id"]) == "pending"
    assert event_kinds(run["id"]) == ["run.opened"]


def test_another_client_cannot_close_the_run(api, other_api):
    run = make_run(api, "executing")

    response = close(other_api, run["id"], "user_stopped")

    assert response.status_code == 404
    assert stored_state(run["id"]) == "executing"


@pytest.mark.parametrize(
    "path", ["runs/{run}/", "runs/{run}/transition/", "runs/{run}/close/", "sessions/{session}/runs/"]
)
def test_no_key_no_access(api, path):
    run = make_run(api, "pending")
    url = "/api/v1/" + path.format(run=run["id"], session=run["session"])

    response = APIClient().post(url, {}, format="json")

    assert response.status_code in (401, 403)
    assert stored_state(run["id"]) == "pending"


@pytest.mark.parametrize(
    "body",
    [{"to": "sideways"}, {"to": ""}, {"to": None}, {}, {"to": ["executing"]}, {"to": "executing", "force": True}],
)
def test_transition_with_a_bad_body_is_400_and_changes_nothing(api, body):
    run = make_run(api, "pending")

    response = post(api, f"/api/v1/runs/{run['id']}/transition/", body)

    assert error_of(response) == (400, "invalid_payload")
    assert stored_state(run["id"]) == "pending"


@pytest.mark.parametrize("to", ["suspended", "executing"])
def test_an_agent_cannot_unpark_its_own_run(api, to):
    run = make_run(api, "suspended")

    response = transition(api, run["id"], to)

    assert error_of(response) == (409, "run_state_transition")
    assert stored_state(run["id"]) == "suspended"


def test_a_body_that_is_not_strict_json_is_400(api):
    run = make_run(api, "pending")

    response = api.post(
        f"/api/v1/runs/{run['id']}/transition/",
        '{"to": "planning", "to": "executing"}',
        content_type="application/json",
    )

    assert response.status_code == 400
    assert stored_state(run["id"]) == "pending"


def gate_read(api, run_id, tool_call_id="c1"):
    return post(
        api,
        f"/api/v1/runs/{run_id}/tool-calls/",
        {"tool_call_id": tool_call_id, "step_id": "s1", "tool": "get_patient_summary", "args": {}},
    )


def test_every_touch_moves_last_activity(api):
    run = make_run(api, "pending")
    hour_ago = timezone.now() - timedelta(hours=1)

    for step in (
        lambda: transition(api, run["id"], "executing"),
        lambda: gate_read(api, run["id"]),
        lambda: close(api, run["id"], "completed"),
    ):
        Run.objects.filter(pk=run["id"]).update(last_activity_at=hour_ago)
        before = timezone.now()
        assert step().status_code == 200
        assert before <= Run.objects.get(pk=run["id"]).last_activity_at <= timezone.now()


def test_a_gate_call_right_after_another_keeps_the_runs_last_activity(api, monkeypatch):
    """Within spine.activity_resolution() the touch leaves last_activity_at as it is: the UPDATE that
    locks the run then changes no indexed column (a HOT update), however fast an agent gates."""
    monkeypatch.setattr("runs.spine.activity_resolution", lambda: timedelta(hours=1))  # a slow machine's gap too
    run = make_run(api, "executing")
    assert gate_read(api, run["id"], "c1").status_code == 200
    touched = Run.objects.get(pk=run["id"]).last_activity_at

    assert gate_read(api, run["id"], "c2").status_code == 200
    assert Run.objects.get(pk=run["id"]).last_activity_at == touched


def test_the_activity_resolution_is_a_tenth_of_a_short_idle_timeout(settings):
    from runs.spine import activity_resolution

    assert activity_resolution() == timedelta(seconds=1)
    settings.CONDOR_IDLE_TIMEOUT_SECONDS = 2
    assert activity_resolution() == timedelta(seconds=0.2)


def test_the_idle_sweep_has_its_index(db):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Run._meta.db_table)

    assert any(c["index"] and c["columns"] == ["state", "last_activity_at"] for c in constraints.values())


def test_one_active_run_is_a_partial_unique_constraint(db):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Run._meta.db_table)

    partial = constraints["one_active_run_per_session"]
    assert partial["unique"] and partial["columns"] == ["session_id"]
