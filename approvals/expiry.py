"""Expiring approvals: when their run ends, and (for the sweep) when their time is up."""

from django.db import transaction
from django.utils import timezone

from approvals import audit, cards
from approvals.models import Approval, ApprovalStatus
from runs.models import Run
from runs.outbox import record_event


def _expire(approvals, *, now, actor_system: str, why: dict) -> int:
    count = 0
    for approval in approvals:
        # Conditional: an approval decided or consumed meanwhile is left alone.
        updated = Approval.objects.filter(pk=approval.pk, status=approval.status).update(
            status=ApprovalStatus.EXPIRED, decided_at=approval.decided_at or now
        )
        if not updated:
            continue
        approval.status = ApprovalStatus.EXPIRED
        record_event(approval.run, "approval.expired", step_id=approval.step_id,
                     data={"approval_id": str(approval.pk)}, inbox=cards.removed(approval))
        audit.record(audit.Kind.EXPIRY, approval=approval, actor_system=actor_system,
                     decision="expired", rule_id=approval.rule_id, data=why)
        count += 1
    return count


def expire_pending_for_run(run, *, now=None) -> int:
    """Expire the pending approvals of `run` (inside the caller's transaction, as the run closes)."""
    pending = (
        Approval.objects.select_for_update(of=("self",))
        .select_related("run", "session", "decided_by")
        .filter(run=run, status=ApprovalStatus.PENDING)
    )
    return _expire(list(pending), now=now or timezone.now(),
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
    return count
