"""The sweep closes runs in sets (issue 11): same effect as a single close, each row once, due rows only."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.models import Approval
from audit import chain as audit_chain
from audit.models import AuditEvent
from condor import sweeps as sweep_pass
from runs import spine, sweep_batches
from runs import sweep as sweeps
from runs.models import Run, RunEvent
from tests.helpers.approval_loop import park
from tests.helpers.runs import make_run, stored_state

pytestmark = pytest.mark.usefixtures("catalog")


def make_idle(api, count: int) -> list[str]:
    """`count` executing runs, each in its own session, last touched an hour ago."""
    ids = [make_run(api, "executing")["id"] for _ in range(count)]
    Run.objects.filter(pk__in=ids).update(last_activity_at=timezone.now() - timedelta(hours=1))
    return ids


def parked(api, approvals: int) -> str:
    """A suspended run holding `approvals` pending approvals (parallel calls)."""
    run_id = make_run(api, "executing")["id"]
    for _ in range(approvals):
        park(api, run_id)
    return run_id


# What a close writes (the rows before it carry times and cards that differ from run to run).
CLOSING_EVENTS = ("approval.expired", "approval.withdrawn", "run.closed")
CLOSING_ROWS = ("expiry", "withdrawal", "run_close")


def effect(run_id) -> tuple:
    """What closing `run_id` left behind, with its own ids named by position so two runs compare."""
    run = Run.objects.get(pk=run_id)
    names = {str(run_id): "RUN"}
    for n, approval in enumerate(Approval.objects.filter(run_id=run_id).order_by("requested_at")):
        names.update(
            {str(approval.pk): f"APPROVAL{n}", approval.tool_call_id: f"CALL{n}", approval.step_id: f"STEP{n}"}
        )

    def anonymous(value):
        text = json.dumps(value, sort_keys=True, default=str)
        for real, alias in names.items():
            text = text.replace(f'"{real}"', f'"{alias}"')
        return json.loads(text)

    events = [
        anonymous([event.kind, event.step_id, event.data, event.frames, event.inbox])
        for event in RunEvent.objects.filter(run_id=run_id, kind__in=CLOSING_EVENTS).order_by("id")
    ]
    rows = [
        anonymous(
            [
                row.kind,
                row.actor,
                row.decision,
                row.rule_id,
                row.tool,
                row.op,
                row.patient_ref,
                row.approval_id,
                row.data,
            ]
        )
        for row in AuditEvent.objects.filter(run_id=run_id, kind__in=CLOSING_ROWS).order_by("id")
    ]
    statuses = sorted(Approval.objects.filter(run_id=run_id).values_list("status", flat=True))
    return run.state, run.terminal_reason, statuses, events, rows


def test_a_batch_close_leaves_what_a_single_close_leaves(api, settings):
    settings.CONDOR_SUSPEND_TTL_SECONDS = 60
    single = parked(api, approvals=2)
    batch = [parked(api, approvals=2), parked(api, approvals=1), parked(api, approvals=2)]

    spine.close(single, "sweep_suspend_ttl")
    assert sweeps.abort_overdue_suspends(timezone.now() + timedelta(seconds=61)) == 3

    assert effect(batch[0]) == effect(single)
    assert effect(batch[0])[2] == ["withdrawn", "withdrawn"]
    assert [row[0] for row in effect(batch[1])[4]] == ["withdrawal", "run_close"]
    assert [event[0] for event in effect(batch[0])[3]] == ["approval.withdrawn", "approval.withdrawn", "run.closed"]
    # Each session's chain gained three rows at once (two withdrawals, the close): still intact, heads included.
    assert audit_chain.verify().intact


def test_a_run_touched_between_selection_and_lock_is_not_closed(api, monkeypatch):
    touched, idle = make_idle(api, 2)
    real_guarded = sweep_batches.close_guarded

    def touch_then_close(close_batch, ids, what):
        # The ids were read as due; the agent's gate call lands before the batch locks them.
        spine.touch(touched)
        return real_guarded(close_batch, ids, what)

    monkeypatch.setattr(sweep_batches, "close_guarded", touch_then_close)

    assert sweeps.abort_idle_runs(timezone.now()) == 1
    assert stored_state(touched) == "executing"
    assert stored_state(idle) == "aborted"


def test_a_pass_walks_every_batch_until_nothing_is_due(api, settings):
    settings.CONDOR_SWEEP_BATCH_SIZE = 2
    runs = make_idle(api, 5)

    counts = sweep_pass.sweep()

    assert counts["runs_idle"] == 5
    assert set(Run.objects.filter(pk__in=runs).values_list("terminal_reason", flat=True)) == {"sweep_idle"}
    assert counts["seconds"] >= 0


def test_a_spent_budget_ends_the_pass_after_one_batch(api, settings):
    settings.CONDOR_SWEEP_BATCH_SIZE = 2
    settings.CONDOR_SWEEP_BUDGET_SECONDS = 0
    make_idle(api, 5)

    assert sweep_pass.sweep()["runs_idle"] == 2
    assert sweep_pass.sweep()["runs_idle"] == 2  # the next pass goes on where this one stopped
    assert sweep_pass.sweep()["runs_idle"] == 1


def pass_queries(api, runs: int) -> list[str]:
    make_idle(api, runs)
    with CaptureQueriesContext(connection) as queries:
        assert sweep_pass.sweep()["runs_idle"] == runs
    return [query["sql"] for query in queries.captured_queries]


# A pass over idle runs, as PostgreSQL sees it inside the test's transaction:
# - 5 candidate reads (approvals due, escalations due, orphaned, overdue, idle runs);
# - the idle batch, 14: its savepoint and release, lock runs (a values read), UPDATE runs, lock
#   approvals, INSERT the events (RETURNING their ids: the pushes name them by id), lock chain
#   heads, create the missing ones and lock them (these sessions' first audit row), INSERT audit
#   rows, UPDATE heads (one round), telemetry INSERT in a savepoint (3);
# - the drainer (1: its read; it leaves the events of this pass alone, too young, runs/publish.py),
#   the pruning (1), the heartbeat (8, savepoints included).
PASS_QUERIES = 29


@pytest.mark.parametrize("runs", [2, 25])
def test_a_pass_costs_the_same_queries_however_many_runs_it_closes(api, runs):
    assert len(pass_queries(api, runs)) == PASS_QUERIES
