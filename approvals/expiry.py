"""Expiring approvals: when their run ends, and (for the sweep) when their time is up."""

from django.utils import timezone

from approvals import audit, cards
from approvals.decision_frames import decision_frames
from approvals.models import Approval, ApprovalStatus
from approvals.models.approval import OPEN_STATUSES
from runs.outbox import record_event


def _expire(approvals, *, now) -> int:
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
        audit.record(audit.Kind.EXPIRY, approval=approval, decision="expired", rule_id=approval.rule_id)
        count += 1
    return count


def expire_pending_for_run(run, *, now=None, include_approved: bool = False) -> int:
    """Expire the pending approvals of `run` (inside the caller's transaction).

    With `include_approved`, approved but unconsumed ones expire too: a reviewer
    who stops a run withdraws every grant it still holds, so none can be used by
    a cold replay later. A plain close or a supersede leaves grants consumable
    until their deadline (SPEC section 3).
    """
    statuses = OPEN_STATUSES if include_approved else (ApprovalStatus.PENDING,)
    open_approvals = (
        Approval.objects.select_for_update(of=("self",))
        .select_related("run", "session", "decided_by")
        .filter(run=run, status__in=statuses)
    )
    return _expire(list(open_approvals), now=now or timezone.now())


def expire_due(*, now=None, batch: int = 500) -> int:
    """Expire pending and approved approvals past `expires_at`; one small step each."""
    from django.db import transaction

    now = now or timezone.now()
    due = list(
        Approval.objects.filter(
            status__in=[ApprovalStatus.PENDING, ApprovalStatus.APPROVED], expires_at__lte=now
        ).values_list("pk", flat=True)[:batch]
    )
    count = 0
    for pk in due:
        with transaction.atomic():
            rows = list(
                Approval.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("run", "session", "decided_by")
                .filter(pk=pk, status__in=[ApprovalStatus.PENDING, ApprovalStatus.APPROVED], expires_at__lte=now)
            )
            count += _expire(rows, now=now)
    return count
