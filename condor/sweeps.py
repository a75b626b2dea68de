"""The sweep pass: each app's due work, one step after another, on every beat.

Composed here, at the project root, because the steps belong to apps at every layer:
the approvals expire and escalate cards and abort the runs left with none, the run spine
aborts overdue and idle runs and re-pushes the outbox, and the agents' idempotency
records are pruned. A failing step is logged and counted -1; the others still run. The
pass writes its counts as the sweep's heartbeat, which the admin dashboard reads. Safe
to run from several beats at once (each step is).
"""

import logging
import time

from django.utils import timezone

from agents import idempotency
from approvals import escalation, expiry
from runs import heartbeats
from runs import sweep as run_sweeps
from runs.sweep_batches import WHOLE, Share, budget_deadline

logger = logging.getLogger(__name__)


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
        "approvals_expired": lambda: expiry.expire_due(now=now, until=until, share=share),
        "runs_approval_expired": lambda: expiry.abort_orphaned_suspends(until=until, share=share),
        "runs_suspend_ttl": lambda: run_sweeps.abort_overdue_suspends(now, until=until, share=share),
        "runs_idle": lambda: run_sweeps.abort_idle_runs(now, until=until, share=share),
    }


def sweep(now=None, *, share: Share = WHOLE) -> dict[str, int | float]:
    """One pass of every sweep: its counts, and how long it took (`seconds`). Safe to run from several beats at once.

    With a `share` of several parts, the backlog steps walk only this pass's slice
    of the key space: `sweep_share` walks the others at the same time, in other
    worker processes (condor/tasks.py); the rest of the pass runs here only.
    """
    started = time.monotonic()
    until = budget_deadline()
    now = now or timezone.now()
    backlog = _backlog_steps(now, until, share)
    counts = _run_steps(
        {
            "approvals_expired": backlog.pop("approvals_expired"),
            "approvals_escalated": lambda: escalation.escalate_due(now=now),
            **backlog,
            "events_republished": lambda: run_sweeps.drain_outbox(until),
            "idempotency_pruned": lambda: idempotency.prune_expired(now),
        }
    )
    counts["seconds"] = round(time.monotonic() - started, 3)
    heartbeats.beat(heartbeats.SWEEP, counts)
    return counts


def sweep_share(share: Share, now=None) -> dict[str, int | float]:
    """The backlog steps of a pass over `share` of the key space, beside the `sweep` that takes another share."""
    started = time.monotonic()
    counts = _run_steps(_backlog_steps(now or timezone.now(), budget_deadline(), share))
    counts["seconds"] = round(time.monotonic() - started, 3)
    return counts
