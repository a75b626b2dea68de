"""Messages: append, fetch, list and drop, owner-scoped (SPEC section 7)."""

import pytest

from sessions_app.models import Message, Session
from tests.helpers.runs import append, make_session, open_run


@pytest.fixture
def session(api):
    return make_session(api, title="Ward round")


def test_an_appended_message_keeps_the_clients_id_role_and_parts(api, session):
    parts = [{"type": "text", "text": "What is her potassium?"}]

    response = append(api, session["id"], "user", parts, id="msg_client_1")

    assert response.status_code == 201
    assert {k: response.json()[k] for k in ("id", "role", "parts", "run")} == {
        "id": "msg_client_1",
        "role": "user",
        "parts": parts,
        "run": None,
    }
    assert api.get(f"/api/v1/sessions/{session['id']}/messages/msg_client_1/").json()["parts"] == parts


def test_a_message_without_an_id_gets_one(api, session):
    assert append(api, session["id"]).json()["id"].startswith("msg_")


def test_an_assistant_message_may_name_its_run(api, session):
    run = open_run(api, session["id"])

    response = append(api, session["id"], "assistant", [{"type": "text", "text": "Checking."}], run=run["id"])

    assert response.status_code == 201
    assert response.json()["run"] == run["id"]


def test_a_run_of_another_session_is_refused(api, session):
    elsewhere = open_run(api, make_session(api)["id"])

    response = append(api, session["id"], "assistant", run=elsewhere["id"])

    assert response.status_code == 400
    assert not Message.objects.exists()


def test_a_taken_id_is_409(api, session):
    append(api, session["id"], id="msg_1")

    response = append(api, session["id"], id="msg_1")

    assert response.status_code == 409
    assert response.json()["error"] == "message_exists"
    assert Message.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"role": "tool", "parts": [{"type": "text", "text": "x"}]},
        {"role": "user", "parts": []},
        {"role": "user", "parts": [{"text": "no type"}]},
        {"role": "user", "parts": ["text"]},
        {"role": "user", "parts": [{"type": "text", "text": "x"}], "id": "has space"},
        {"role": "user", "parts": [{"type": "text", "text": "x"}], "metadata": {}},
    ],
)
def test_a_bad_message_is_400_and_stores_nothing(api, session, body):
    response = api.post(f"/api/v1/sessions/{session['id']}/messages/", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
    assert not Message.objects.exists()


def test_dropping_a_message_removes_only_it(api, session):
    append(api, session["id"], id="keep")
    append(api, session["id"], id="drop")

    assert api.delete(f"/api/v1/sessions/{session['id']}/messages/drop/").status_code == 204
    assert list(Message.objects.values_list("message_id", flat=True)) == ["keep"]
    assert api.delete(f"/api/v1/sessions/{session['id']}/messages/drop/").status_code == 404


def test_another_client_cannot_read_append_or_drop(api, other_api, session):
    append(api, session["id"], id="mine")
    base = f"/api/v1/sessions/{session['id']}"

    assert other_api.get(f"{base}/messages/").status_code == 404
    assert other_api.get(f"{base}/messages/mine/").status_code == 404
    assert other_api.get(f"{base}/history/").status_code == 404
    assert append(other_api, session["id"]).status_code == 404
    assert other_api.delete(f"{base}/messages/mine/").status_code == 404
    assert Message.objects.count() == 1


def test_the_message_list_is_in_conversation_order_and_pages_by_cursor(api, session):
    ids = [append(api, session["id"], id=f"m{n}").json()["id"] for n in range(5)]

    first = api.get(f"/api/v1/sessions/{session['id']}/messages/?limit=3").json()
    rest = api.get(first["next"]).json()

    assert [m["id"] for m in first["results"] + rest["results"]] == ids


@pytest.mark.parametrize("rows", [1, 200])
def test_the_message_list_and_history_cost_the_same_queries_however_long(
    api, ward_agent, session, django_assert_max_num_queries, rows
):
    stored = Session.objects.get(pk=session["id"])
    Message.objects.bulk_create(
        Message(session=stored, role="user", parts=[{"type": "text", "text": str(n)}]) for n in range(rows)
    )

    # key, session, page
    with django_assert_max_num_queries(3):
        assert len(api.get(f"/api/v1/sessions/{session['id']}/messages/?limit=200").json()["results"]) == rows
    # key, session, messages, frames
    with django_assert_max_num_queries(4):
        assert len(api.get(f"/api/v1/sessions/{session['id']}/history/").json()) == rows


@pytest.mark.parametrize("runs", [1, 100])
def test_history_costs_the_same_queries_however_many_runs_it_folds_in(
    api, session, django_assert_max_num_queries, runs
):
    from django.utils import timezone

    from runs import frames
    from runs.models import Run, RunEvent

    stored, now = Session.objects.get(pk=session["id"]), timezone.now()
    for n in range(runs):
        run = Run.objects.create(
            session=stored, state="completed", terminal_reason="completed", last_activity_at=now, closed_at=now
        )
        RunEvent.objects.create(
            run=run,
            kind="tool.result",
            published_at=now,
            frames=[
                *frames.allowed_call_frames(f"call-{n}", "record_vitals", {"heart_rate": 70}),
                *frames.result_frames(f"call-{n}", {"saved": True}),
            ],
        )
        if n % 2:  # every other run has an assistant message of its own; the rest get one each
            Message.objects.create(session=stored, role="assistant", run_id=run.pk, parts=[])

    # key, session, messages, frames, and the first-frame times of the runs without a message
    with django_assert_max_num_queries(5):
        assert len(api.get(f"/api/v1/sessions/{session['id']}/history/").json()) == runs
