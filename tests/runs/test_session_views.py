"""A session's event log, runs summary and usage roll-up (SPEC section 7)."""

import pytest
from django.utils import timezone

from runs.models import Run, RunEvent
from sessions_app.models import Session
from tests.helpers.runs import close, make_session, open_run


@pytest.fixture
def session(api):
    return make_session(api, title="Ward round")


def get(api, session_id, tail, **params):
    response = api.get(f"/api/v1/sessions/{session_id}/{tail}/", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_events_are_the_persisted_log_in_order_with_an_after_cursor(api, session):
    first = open_run(api, session["id"])
    close(api, first["id"], "completed")
    open_run(api, session["id"])
    ids = list(RunEvent.objects.filter(run__session_id=session["id"]).order_by("id").values_list("id", flat=True))

    page = get(api, session["id"], "events", limit=2)
    rest = get(api, session["id"], "events", after=page["next_after"])

    assert [e["id"] for e in page["results"] + rest["results"]] == ids
    assert [e["kind"] for e in page["results"]] == ["run.opened", "run.closed"]
    assert page["results"][0]["run"] == first["id"]
    assert rest["next_after"] is None


def test_events_of_another_session_are_not_in_the_log(api, session):
    open_run(api, make_session(api)["id"])

    assert get(api, session["id"], "events")["results"] == []


@pytest.mark.parametrize(
    "query", ["after=-1", "after=x", "limit=ten", "after=%C2%B2", "limit=%C2%B2", "after=" + "9" * 40]
)
def test_a_bad_cursor_is_400(api, session, query):
    response = api.get(f"/api/v1/sessions/{session['id']}/events/?{query}")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"


def test_runs_summary_counts_by_state_and_terminal_reason(api, session):
    for reason in ("completed", "completed", "error"):
        close(api, open_run(api, session["id"])["id"], reason)
    open_run(api, session["id"])
    open_run(api, session["id"])  # supersedes the one before

    body = get(api, session["id"], "runs-summary")

    assert body == {
        "total": 5,
        "active": 1,
        "by_state": {"completed": 2, "failed": 1, "aborted": 1, "pending": 1},
        "by_terminal_reason": {"completed": 2, "error": 1, "superseded": 1},
    }


def test_usage_rollup_sums_tokens_and_cost_from_run_telemetry(api, session):
    close(
        api,
        open_run(api, session["id"])["id"],
        "completed",
        usage={"model": "m-large", "input_tokens": 1200, "output_tokens": 300, "cost": "0.0125"},
    )
    close(
        api,
        open_run(api, session["id"])["id"],
        "completed",
        usage={"model": "m-large", "inputTokens": 800, "outputTokens": 100, "cost": 0.0075},
    )
    close(api, open_run(api, session["id"])["id"], "error", usage={"model": "m-small", "input_tokens": 50})

    body = get(api, session["id"], "usage-rollup")

    assert {k: body[k] for k in ("runs", "input_tokens", "output_tokens", "cost")} == {
        "runs": 3,
        "input_tokens": 2050,
        "output_tokens": 400,
        "cost": "0.020000",
    }
    assert [(m["model"], m["runs"], m["input_tokens"]) for m in body["by_model"]] == [
        ("m-large", 2, 2000),
        ("m-small", 1, 50),
    ]


def test_usage_rollup_holds_a_total_beyond_any_one_runs_cost(api, session):
    # Each run's cost is at most 10^8 (runs/telemetry.py); a session of 101 such runs sums past 10^10,
    # which a 16-digit field with 6 places could not render (a 500).
    from runs.models import RunDispatch

    now = timezone.now()
    runs = Run.objects.bulk_create(
        Run(
            session_id=session["id"],
            state="completed",
            terminal_reason="completed",
            last_activity_at=now,
            closed_at=now,
        )
        for _ in range(101)
    )
    RunDispatch.objects.bulk_create(
        RunDispatch(run=run, session_id=session["id"], recorded_at=now, cost="99999999.999999") for run in runs
    )
    assert get(api, session["id"], "usage-rollup")["cost"] == "10099999999.999899"


def test_another_client_sees_none_of_it(api, other_api, session):
    for tail in ("events", "runs-summary", "usage-rollup"):
        assert other_api.get(f"/api/v1/sessions/{session['id']}/{tail}/").status_code == 404


@pytest.mark.parametrize("runs", [1, 200])
def test_each_costs_the_same_queries_however_many_runs(api, session, django_assert_max_num_queries, runs):
    stored = Session.objects.get(pk=session["id"])
    made = Run.objects.bulk_create(
        Run(
            session=stored,
            autonomy="guarded",
            state="completed",
            terminal_reason="completed",
            last_activity_at=timezone.now(),
        )
        for _ in range(runs)
    )
    RunEvent.objects.bulk_create(RunEvent(run=run, kind="run.opened") for run in made)

    for tail in ("events", "runs-summary", "usage-rollup"):
        # key, session, the one aggregate or page
        with django_assert_max_num_queries(3):
            get(api, session["id"], tail, limit=500)
