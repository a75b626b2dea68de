"""Sweeps under Celery beat (SPEC section 6): a real worker and beat, on schedule, each row closed once."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.models import Approval
from audit.models import AuditEvent
from runs.models import Heartbeat, Run, RunEvent
from tests.deploy.processes import celery_worker, passes
from tests.helpers.approval_loop import suspend
from tests.helpers.runs import open_executing_run
from tests.helpers.waits import wait_for

pytestmark = [pytest.mark.usefixtures("catalog", "empty_task_queue")]

IDLE_TIMEOUT = 3
APPROVAL_TTL = 3


def test_beat_closes_an_idle_run_and_expires_an_approval_when_they_fall_due(api, shared_env, settings, tmp_path):
    settings.CONDOR_APPROVAL_TTL_SECONDS = APPROVAL_TTL  # the deadline is stamped here, at suspend time
    idle = open_executing_run(api)
    parked = open_executing_run(api)
    approval = suspend(api, parked)
    idle_since = Run.objects.get(pk=idle).last_activity_at
    env = {**shared_env, "CONDOR_SWEEP_INTERVAL_SECONDS": "1", "CONDOR_IDLE_TIMEOUT_SECONDS": str(IDLE_TIMEOUT)}
    with celery_worker("sweeper", env, beat_schedule=tmp_path / "beat-schedule") as worker:

        def reported(step):
            return sum(counts[step] for counts in passes(worker.log()))

        wait_for(
            lambda: reported("runs_idle") and reported("approvals_expired") and reported("runs_approval_expired"),
            60,
            "passes closing the idle run, expiring the approval and closing its run",
            worker.log,
        )
        worker.stop()  # a warm shutdown: the pass under way finishes and logs, so the log is complete
        done = passes(worker.log())
    closed, stored = Run.objects.get(pk=idle), Approval.objects.get(pk=approval["id"])
    # On schedule: neither before the idle timeout ran out nor before the approval's deadline.
    assert closed.closed_at >= idle_since + timedelta(seconds=IDLE_TIMEOUT)
    assert stored.decided_at >= stored.expires_at
    assert AuditEvent.objects.get(kind="expiry", approval_id=stored.pk).actor == "sweep"
    assert Run.objects.get(pk=idle).terminal_reason == "sweep_idle"
    assert Run.objects.get(pk=parked).terminal_reason == "approval_expired"
    assert stored.status == "expired"
    assert sum(counts["runs_idle"] for counts in done) == 1
    assert sum(counts["approvals_expired"] for counts in done) == 1
    assert sum(counts["runs_approval_expired"] for counts in done) == 1
    beat = Heartbeat.objects.get(name="sweep")  # what the admin dashboard shows
    assert beat.details == done[-1] and idle_since <= beat.at <= timezone.now()  # this worker's beat


RUNS = 40
PASSES = 4  # two workers × two pool processes: four passes at once


def test_two_workers_running_the_pass_at_once_close_each_run_exactly_once(api, shared_env, tmp_path):
    from condor.celery import app

    runs = [open_executing_run(api, patient_ref=f"MRN-{i}") for i in range(RUNS)]
    Run.objects.filter(pk__in=runs).update(last_activity_at=timezone.now() - timedelta(hours=1))
    # Small batches, so that passes running at once share the backlog (one batch of 1000 would take it all).
    env = {**shared_env, "CONDOR_SWEEP_BATCH_SIZE": "2"}
    workers = [celery_worker(f"w{n}", env, concurrency=2) for n in (1, 2)]
    try:
        for worker in workers:
            worker.start()
        for _ in range(PASSES):
            app.send_task("condor.sweep")
        wait_for(lambda: sum(len(passes(worker.log())) for worker in workers) == PASSES, 120, "four passes")
        done = [counts for worker in workers for counts in passes(worker.log())]
    finally:
        for worker in workers:
            worker.close()
    assert set(Run.objects.filter(pk__in=runs).values_list("terminal_reason", flat=True)) == {"sweep_idle"}
    closed_events = RunEvent.objects.filter(run_id__in=runs, kind="run.closed")
    assert sorted(closed_events.values_list("run_id", flat=True)) == sorted(
        Run.objects.filter(pk__in=runs).values_list("pk", flat=True)
    )
    closing_audit = AuditEvent.objects.filter(run_id__in=runs, kind="run_close")
    assert closing_audit.count() == RUNS and closing_audit.values("run_id").distinct().count() == RUNS
    assert sum(counts["runs_idle"] for counts in done) == RUNS  # every close reported by exactly one pass
    # The passes really overlapped: more than one of them closed runs.
    assert len([counts for counts in done if counts["runs_idle"]]) >= 2, done
