"""The sweeps: nothing hangs forever, and nothing the outbox holds is lost.

One pass: expire approvals past their deadline; abort suspended runs left with
no open approval (`approval_expired`) or parked past the suspend TTL
(`sweep_suspend_ttl`); abort active runs idle past the idle timeout
(`sweep_idle`); re-publish unpublished outbox events; prune old idempotency
records. Each row is closed in its own transaction under a SKIP LOCKED row lock,
so one bad row never aborts the pass and two beats never close a run twice.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals import heartbeats
from approvals.escalation import escalate_due
from approvals.expiry import expire_due
from approvals.models import Approval, IdempotencyRecord
from approvals.models.approval import OPEN_STATUSES
from runs import spine
from runs.models import Run
from runs.states import RunState, TerminalReason

logger = logging.getLogger(__name__)

IDLE_STATES = (RunState.PENDING, RunState.PLANNING, RunState.EXECUTING)


def _close_each(candidates, reason: TerminalReason, still_due) -> int:
    closed = 0
    for run_id in candidates:
        try:
            with transaction.atomic():
                run = (
                    Run.objects.select_for_update(skip_locked=True, of=("self",))
                    .select_related("session").filter(pk=run_id).first()
                )
                if run is None or not still_due(run):
                    continue  # locked by another sweeper, or no longer due
                spine._close(run, reason)
                closed += 1
        except Exception:
            logger.exception("sweep could not close run %s with %s; continuing", run_id, reason)
    return closed


def _has_open_approval(run) -> bool:
    return Approval.objects.filter(run=run, status__in=OPEN_STATUSES).exists()


def abort_orphaned_suspends(batch: int = 500) -> int:
    """Suspended runs whose approvals have all expired (or were never created)."""
    candidates = (
        Run.objects.filter(state=RunState.SUSPENDED)
        .exclude(approvals__status__in=OPEN_STATUSES)
        .values_list("pk", flat=True)[:batch]
    )
    return _close_each(list(candidates), TerminalReason.APPROVAL_EXPIRED,
                       lambda run: run.state == RunState.SUSPENDED and not _has_open_approval(run))


def abort_overdue_suspends(now, batch: int = 500) -> int:
    cutoff = now - timedelta(seconds=settings.CONDOR_SUSPEND_TTL_SECONDS)
    candidates = Run.objects.filter(state=RunState.SUSPENDED, last_activity_at__lt=cutoff).values_list("pk", flat=True)
    return _close_each(list(candidates[:batch]), TerminalReason.SWEEP_SUSPEND_TTL,
                       lambda run: run.state == RunState.SUSPENDED and run.last_activity_at < cutoff)


def abort_idle_runs(now, batch: int = 500) -> int:
    cutoff = now - timedelta(seconds=settings.CONDOR_IDLE_TIMEOUT_SECONDS)
    candidates = Run.objects.filter(state__in=IDLE_STATES, last_activity_at__lt=cutoff).values_list("pk", flat=True)
    return _close_each(list(candidates[:batch]), TerminalReason.SWEEP_IDLE,
                       lambda run: run.state in IDLE_STATES and run.last_activity_at < cutoff)


def prune_idempotency_records(now) -> int:
    cutoff = now - timedelta(seconds=settings.CONDOR_IDEMPOTENCY_TTL_SECONDS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def sweep(now=None) -> dict[str, int]:
    """One pass of every sweep. Safe to run from several beats at once."""
    from runs.publish import drain

    now = now or timezone.now()
    steps = {
        "approvals_expired": lambda: expire_due(now=now),
        "approvals_escalated": lambda: escalate_due(now=now),
        "runs_approval_expired": abort_orphaned_suspends,
        "runs_suspend_ttl": lambda: abort_overdue_suspends(now),
        "runs_idle": lambda: abort_idle_runs(now),
        "events_republished": drain,
        "idempotency_pruned": lambda: prune_idempotency_records(now),
    }
    counts = {}
    for name, step in steps.items():
        try:
            counts[name] = step()
        except Exception:  # one failing step must not starve the others
            logger.exception("sweep step %s failed", name)
            counts[name] = -1
    heartbeats.beat(heartbeats.SWEEP, counts)
    return counts
