"""Run telemetry: one dispatch row per closed run, never at the close's expense (SPEC section 7)."""

import datetime
from decimal import Decimal

import pytest
from django.db import DatabaseError
from django.utils import timezone

from runs import telemetry
from runs.models import Run, RunDispatch
from tests.helpers.runs import close, make_session, open_run


@pytest.fixture
def session(api):
    return make_session(api)


def test_a_closed_run_has_one_dispatch_row(api, session):
    run = open_run(api, session["id"], flow_key="discharge", engine="condor")

    close(api, run["id"], "completed", usage={"model": "m1", "input_tokens": 10, "output_tokens": 4, "cost": "0.5"})
    close(api, run["id"], "completed")  # the idempotent repeat writes nothing more

    row = RunDispatch.objects.get()
    assert (
        row.run_id,
        row.flow_key,
        row.engine,
        row.model,
        row.input_tokens,
        row.output_tokens,
        row.cost,
        row.outcome,
        row.state,
    ) == (Run.objects.get().pk, "discharge", "condor", "m1", 10, 4, Decimal("0.5"), "completed", "completed")
    assert row.latency_ms >= 0


def test_a_superseded_run_gets_its_row_too(api, session):
    open_run(api, session["id"])
    open_run(api, session["id"])

    assert list(RunDispatch.objects.values_list("outcome", flat=True)) == ["superseded"]


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": -5, "output_tokens": "many", "cost": "free"},
        {"input_tokens": True, "cost": float("inf")},
        {"cost": [1]},
    ],
)
def test_usage_the_agent_garbled_counts_as_zero(usage):
    run = Run(usage=usage, created_at=timezone.now(), closed_at=timezone.now(), terminal_reason="completed")
    run.session_id = None

    fields = telemetry.dispatch_fields(run)

    assert (fields["input_tokens"], fields["output_tokens"], fields["cost"]) == (0, 0, Decimal(0))


def test_a_failing_telemetry_write_does_not_fail_the_close(api, session, monkeypatch):
    def broken(*args, **kwargs):
        raise DatabaseError("telemetry table is gone")

    monkeypatch.setattr(RunDispatch.objects, "bulk_create", broken)
    run = open_run(api, session["id"])

    response = close(api, run["id"], "completed")

    assert response.status_code == 200
    assert Run.objects.get(pk=run["id"]).state == "completed"
    assert not RunDispatch.objects.exists()


def test_a_database_error_inside_the_write_leaves_the_close_committed(api, session, monkeypatch):
    # A real failed INSERT (not a Python exception before it): the savepoint must contain it.
    monkeypatch.setattr(
        telemetry, "dispatch_fields", lambda run: {**_fields_of(run), "model": "x" * 500}
    )  # longer than the column
    run = open_run(api, session["id"])

    assert close(api, run["id"], "completed").status_code == 200
    assert Run.objects.get(pk=run["id"]).state == "completed"
    assert not RunDispatch.objects.exists()


_fields_of = telemetry.dispatch_fields


def test_the_per_flow_split(api, session, ward_agent):
    for flow, cost in (("triage", "1.5"), ("triage", "0.5"), ("discharge", "2")):
        run = open_run(api, session["id"], flow_key=flow, engine="condor")
        close(api, run["id"], "completed", usage={"cost": cost, "input_tokens": 1})
    old = RunDispatch.objects.filter(flow_key="discharge").get()
    RunDispatch.objects.filter(pk=old.pk).update(recorded_at=timezone.now() - datetime.timedelta(days=2))

    everything = telemetry.split_by_flow_key()
    recent = telemetry.split_by_flow_key(since=timezone.now() - datetime.timedelta(days=1))

    assert [(r["flow_key"], r["runs"], r["cost"]) for r in everything] == [
        ("triage", 2, Decimal("2")),
        ("discharge", 1, Decimal("2")),
    ]
    assert [r["flow_key"] for r in recent] == ["triage"]
