"""Expiring approvals: when their run ends, and (for the sweep) when their time is up."""

import logging

from django.db import transaction
from django.utils import timezone

from approvals import audit, cards
from approvals.decision_frames import decision_frames
from approvals.models import Approval, ApprovalStatus
from approvals.models.approval import OPEN_STATUSES
from runs.models import Run
from runs.outbox import record_event

logger = logging.getLogger(__name__)


def _expire(approvals, *, now, actor_system: str, why: dict, actor_user=None) -> int:
    count = 0
    for approval in approvals:
        # Conditional: an approval decided or consumed meanwhile is left alone.
        updated = Approval.objects.filter(pk=approval.pk, status=approval.status).update(
            status=ApprovalStatus.EXPIRED, decided_at=approval.decided_at or now
        )
        if not updated:
            continue
        approval.status = ApprovalStatus.EXPIRED
        # The agent hears it like any decision: approved false, reason "expired", then the denial.
        record_event(approval.run, "approval.expired", step_id=approval.step_id,
                     data={"approval_id": str(approval.pk)}, frames=decision_frames(approval),
                     inbox=cards.removed(approval))
        audit.record(audit.Kind.EXPIRY, approval=approval, actor_system=actor_system, actor_user=actor_user,
                     decision="expired", rule_id=approval.rule_id, data=why)
        count += 1
    return count


def expire_pending_for_run(run, *, now=None, include_approved: bool = False, actor_user=None) -> int:
    """Expire the pending approvals of `run` (inside the caller's transaction).

    With `include_approved`, approved but unconsumed ones expire too: a reviewer
    who stops a run withdraws every grant it still holds, so none can be used by
    a cold replay later. A plain close or a supersede leaves grants consumable
    until their deadline (SPEC section 3). `actor_user` is the reviewer who
    stopped the run, when one did.
    """
    statuses = OPEN_STATUSES if include_approved else (ApprovalStatus.PENDING,)
    open_approvals = (
        Approval.objects.select_for_update(of=("self",))
        .select_related("run", "session", "decided_by")
        .filter(run=run, status__in=statuses)
    )
    return _expire(list(open_approvals), now=now or timezone.now(), actor_user=actor_user,
                   actor_system=audit.closing_actor(run.terminal_reason),
                   why={"cause": "run closed", "terminal_reason": run.terminal_reason})


def expire_due(*, now=None, batch: int = 500) -> int:
    """Expire pending and approved approvals past `expires_at`; one small step each."""
    now = now or timezone.now()
    due = list(
        Approval.objects.filter(
            status__in=[ApprovalStatus.PENDING, ApprovalStatus.APPROVED], expires_at__lte=now
        ).values_list("pk", "run_id")[:batch]
    )
    count = 0
    for pk, run_id in due:
        try:
            with transaction.atomic():
                # The lock order everywhere: run, then approvals, then (in audit.record) the
                # chain head. A run busy elsewhere is skipped; the next pass gets it.
                if Run.objects.select_for_update(skip_locked=True).filter(pk=run_id).first() is None:
                    continue
                rows = list(
                    Approval.objects.select_for_update(skip_locked=True, of=("self",))
                    .select_related("run", "session", "decided_by")
                    .filter(pk=pk, status__in=[ApprovalStatus.PENDING, ApprovalStatus.APPROVED], expires_at__lte=now)
                )
                count += _expire(rows, now=now, actor_system=audit.SWEEP, why={"cause": "deadline passed"})
        except Exception:  # one bad row is rolled back and logged; the rest of the batch still expires
            logger.exception("sweep could not expire approval %s; continuing", pk)
    return count
