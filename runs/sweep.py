"""The run sweeps: nothing hangs forever, and nothing the outbox holds is lost.

Abort suspended runs parked past the suspend TTL, counted from the park
(`sweep_suspend_ttl`); abort active runs idle past the idle timeout (`sweep_idle`);
push again the outbox events whose push failed, and mark the ones nobody listened to
(runs/publish.py). Runs are closed in batches with set-based statements
(runs/sweep_batches.py walks them: SKIP LOCKED, the due condition re-checked under the
lock, a failing batch retried row by row), until nothing is due or the pass has spent
CONDOR_SWEEP_BUDGET_SECONDS; so one bad row never aborts the pass and two beats never
close a run twice. The pass that runs these with the other apps' due work is
condor/sweeps.py.
"""

import logging
import time
from datetime import timedelta

from django.conf import settings

from runs import spine
from runs.closing import ClosingRun
from runs.models import Run
from runs.publish import drain
from runs.states import RunState, TerminalReason
from runs.sweep_batches import WHOLE, Share, budget_deadline, walk

logger = logging.getLogger(__name__)

IDLE_STATES = (RunState.PENDING, RunState.PLANNING, RunState.EXECUTING)


def close_due(due, reason: TerminalReason, until: float | None, share: Share, *, recheck: bool = False) -> int:
    """Close the runs of queryset `due` with `reason`, batch after batch (sweep_batches.walk), in the caller's
    sweep pass; each batch is its own transaction. `recheck`: `due` reads other tables (a subquery), so it is asked again once the runs are locked."""

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


def abort_overdue_suspends(now, *, until: float | None = None, share: Share = WHOLE) -> int:
    """Suspended runs parked longer than the suspend TTL, counted from the park: the gate calls,
    decisions and resumes a parked run receives meanwhile keep it active, not parked any shorter."""
    cutoff = now - timedelta(seconds=settings.CONDOR_SUSPEND_TTL_SECONDS)
    due = Run.objects.filter(state=RunState.SUSPENDED, suspended_at__lt=cutoff)
    return close_due(due, TerminalReason.SWEEP_SUSPEND_TTL, until, share)


def abort_idle_runs(now, *, until: float | None = None, share: Share = WHOLE) -> int:
    cutoff = now - timedelta(seconds=settings.CONDOR_IDLE_TIMEOUT_SECONDS)
    due = Run.objects.filter(state__in=IDLE_STATES, last_activity_at__lt=cutoff)
    return close_due(due, TerminalReason.SWEEP_IDLE, until, share)


# Events the drainer reads at a time: one outbox read, one question of who listens, one mark.
DRAIN_BATCH = 500


def drain_outbox(until: float) -> int:
    """The outbox drainer, batch after batch while each is done in full and the pass has time left."""
    drained = 0
    while True:
        done = drain(DRAIN_BATCH)
        drained += done
        if done < DRAIN_BATCH or time.monotonic() >= until:
            return drained
