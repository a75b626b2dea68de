"""The sweeps: nothing hangs forever, and nothing the outbox holds is lost.

One pass: expire approvals past their deadline; abort suspended runs left with
no open approval (`approval_expired`) or parked past the suspend TTL, counted
from the park (`sweep_suspend_ttl`); abort active runs idle past the idle timeout
(`sweep_idle`); push again the outbox events whose push failed, and mark the
ones nobody listened to (runs/publish.py); prune old idempotency records. Runs
and approvals are closed in batches with set-based statements
(runs/sweep_batches.py walks them: SKIP LOCKED, the due condition re-checked under
the lock, a failing batch retried row by row), until nothing is due or the pass has
spent CONDOR_SWEEP_BUDGET_SECONDS; so one bad row never aborts the pass and two
beats never close a run twice.
"""

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from agents.models import IdempotencyRecord
from approvals.escalation import escalate_due
from approvals.expiry import expire_due
from approvals.models.approval import OPEN_STATUSES
from runs import heartbeats, spine
from runs.closing import ClosingRun
from runs.models import Run
from runs.states import RunState, TerminalReason
from runs.sweep_batches import WHOLE, Share, budget_deadline, walk

logger = logging.getLogger(__name__)

IDLE_STATES = (RunState.PENDING, RunState.PLANNING, RunState.EXECUTING)


def _close_all(due, reason: TerminalReason, until: float | None, share: Share, *, recheck: bool = False) -> int:
    """`recheck`: `due` reads other tables (a subquery), so it is asked again once the runs are locked."""
    def close_batch(ids) -> int:
        # The lock re-checks `due`: a run touched, resumed or closed since its id was read stays as it is.
        # Read as values (ClosingRun), not models: a thousand Run and Session instances cost more than the close.
        locked = due.select_for_update(skip_locked=True, of=("self",)).filter(pk__any=ids)
        runs = [ClosingRun(*row) for row in locked.values_list(*ClosingRun.COLUMNS)]
        if recheck and runs:
            # That re-check covers only the run's own columns: a subquery answers from the
            # statement's start, before its lock waits. Under the lock nothing can open an
            # approval of these runs, so a fresh read is the last word.
            still_due = set(due.filter(pk__any=[run.pk for run in runs]).values_list("pk", flat=True))
            runs = [run for run in runs if run.pk in still_due]
        spine.close_locked(runs, reason)
        return len(runs)

    return walk(due, close_batch, until=until or budget_deadline(), what=f"runs ({reason})", share=share)


def abort_orphaned_suspends(*, until: float | None = None, share: Share = WHOLE) -> int:
    """Suspended runs whose approvals have all expired (or were never created)."""
    due = Run.objects.filter(state=RunState.SUSPENDED).exclude(approvals__status__in=OPEN_STATUSES)
    return _close_all(due, TerminalReason.APPROVAL_EXPIRED, until, share, recheck=True)


def abort_overdue_suspends(now, *, until: float | None = None, share: Share = WHOLE) -> int:
    """Suspended runs parked longer than the suspend TTL, counted from the park: the gate calls,
    decisions and resumes a parked run receives meanwhile keep it active, not parked any shorter."""
    cutoff = now - timedelta(seconds=settings.CONDOR_SUSPEND_TTL_SECONDS)
    due = Run.objects.filter(state=RunState.SUSPENDED, suspended_at__lt=cutoff)
    return _close_all(due, TerminalReason.SWEEP_SUSPEND_TTL, until, share)


def abort_idle_runs(now, *, until: float | None = None, share: Share = WHOLE) -> int:
    cutoff = now - timedelta(seconds=settings.CONDOR_IDLE_TIMEOUT_SECONDS)
    due = Run.objects.filter(state__in=IDLE_STATES, last_activity_at__lt=cutoff)
    return _close_all(due, TerminalReason.SWEEP_IDLE, until, share)


def prune_idempotency_records(now) -> int:
    cutoff = now - timedelta(seconds=settings.CONDOR_IDEMPOTENCY_TTL_SECONDS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted


# Events the drainer reads at a time: one outbox read, one question of who listens, one mark.
DRAIN_BATCH = 500


def drain_outbox(until: float) -> int:
    """The outbox drainer, batch after batch while each is done in full and the pass has time left."""
    from runs.publish import drain

    drained = 0
    while True:
        done = drain(DRAIN_BATCH)
        drained += done
        if done < DRAIN_BATCH or time.monotonic() >= until:
            return drained


def _run_steps(steps: dict) -> dict[str, int | float]:
    counts: dict[str, int | float] = {}
    for name, step in steps.items():
        try:
            counts[name] = step()
        except Exception:  # one failing step must not starve the others
            logger.exception("sweep step %s failed", name)
            counts[name] = -1
    return counts


def _backlog_steps(now, until: float, share: Share) -> dict:
    """The steps that walk a backlog in batches, over `share` of the key space (in pass order)."""
    return {
        "approvals_expired": lambda: expire_due(now=now, until=until, share=share),
        "runs_approval_expired": lambda: abort_orphaned_suspends(until=until, share=share),
        "runs_suspend_ttl": lambda: abort_overdue_suspends(now, until=until, share=share),
        "runs_idle": lambda: abort_idle_runs(now, until=until, share=share),
    }


def sweep(now=None, *, share: Share = WHOLE) -> dict[str, int | float]:
    """One pass of every sweep: its counts, and how long it took (`seconds`). Safe to run from several beats at once.

    With a `share` of several parts, the backlog steps walk only this pass's slice
    of the key space: `sweep_share` walks the others at the same time, in other
    worker processes (runs/tasks.py); the rest of the pass runs here only.
    """
    started = time.monotonic()
    until = budget_deadline()
    now = now or timezone.now()
    backlog = _backlog_steps(now, until, share)
    counts = _run_steps({
        "approvals_expired": backlog.pop("approvals_expired"),
        "approvals_escalated": lambda: escalate_due(now=now),
        **backlog,
        "events_republished": lambda: drain_outbox(until),
        "idempotency_pruned": lambda: prune_idempotency_records(now),
    })
    counts["seconds"] = round(time.monotonic() - started, 3)
    heartbeats.beat(heartbeats.SWEEP, counts)
    return counts


def sweep_share(share: Share, now=None) -> dict[str, int | float]:
    """The backlog steps of a pass over `share` of the key space, beside the `sweep` that takes another share."""
    started = time.monotonic()
    counts = _run_steps(_backlog_steps(now or timezone.now(), budget_deadline(), share))
    counts["seconds"] = round(time.monotonic() - started, 3)
    return counts
