"""Expiring approvals: when their run ends, and (for the sweep) when their time is up."""

from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from approvals import audit, cards
from approvals.decision_frames import decision_frames
from approvals.models import Approval, ApprovalStatus
from approvals.models.approval import OPEN_STATUSES
from runs.models import Run
from runs.outbox import event, record_events
from runs.sweep_batches import WHOLE, Share, budget_deadline, walk


def _expire(approvals, runs: dict, *, now, actor_system: str, why: dict, actor_user=None) -> int:
    """Expire `approvals`, locked by the caller, with one UPDATE; their events and audit rows go in at once.

    `runs`: each approval's run by id (a Run, or the ClosingRun a sweep batch is closing).
    """
    if not approvals:
        return 0
    Approval.objects.filter(pk__any=[approval.pk for approval in approvals]).update(
        status=ApprovalStatus.EXPIRED, decided_at=Coalesce("decided_at", Value(now))
    )
    for approval in approvals:
        approval.status = ApprovalStatus.EXPIRED
    # The agent hears it like any decision: approved false, reason "expired", then the denial.
    record_events([
        event(runs[approval.run_id], "approval.expired", step_id=approval.step_id,
              data={"approval_id": str(approval.pk)},
              frames=decision_frames(approval), inbox=cards.removed(approval))
        for approval in approvals
    ])
    audit.record_all([
        audit.entry(audit.Kind.EXPIRY, approval=approval, actor_system=actor_system, actor_user=actor_user,
                    decision="expired", rule_id=approval.rule_id, data=why)
        for approval in approvals
    ])
    return len(approvals)


def expire_pending_for_runs(runs, *, now=None, include_approved: bool = False, actor_user=None) -> int:
    """Expire the pending approvals of `runs`, locked and just closed with one reason (in the caller's transaction).

    With `include_approved`, approved but unconsumed ones expire too: a reviewer
    who stops a run withdraws every grant it still holds, so none can be used by
    a cold replay later. A plain close or a supersede leaves grants consumable
    until their deadline (SPEC section 3). `actor_user` is the reviewer who
    stopped the run, when one did.
    """
    by_id = {run.pk: run for run in runs}
    statuses = OPEN_STATUSES if include_approved else (ApprovalStatus.PENDING,)
    open_approvals = list(
        Approval.objects.select_for_update(of=("self",))
        .select_related("session", "decided_by")
        .filter(run_id__any=list(by_id), status__in=statuses).order_by("requested_at", "pk")
    )
    reason = runs[0].terminal_reason
    return _expire(open_approvals, by_id, now=now or timezone.now(), actor_user=actor_user,
                   actor_system=audit.closing_actor(reason),
                   why={"cause": "run closed", "terminal_reason": reason})


def expire_due(*, now=None, until: float | None = None, share: Share = WHOLE) -> int:
    """Expire pending and approved approvals past `expires_at`, a batch a transaction (runs/sweep_batches.py)."""
    now = now or timezone.now()
    due = Approval.objects.filter(status__in=OPEN_STATUSES, expires_at__lte=now)

    def expire_batch(ids) -> int:
        # The lock order everywhere: runs, then approvals, then (in the audit append) the
        # chain heads. A run busy elsewhere is skipped with its approvals; the next pass gets them.
        runs = Run.objects.select_for_update(skip_locked=True, of=("self",)).filter(
            pk__in=Approval.objects.filter(pk__in=ids).values("run_id"))
        rows = list(
            due.select_for_update(skip_locked=True, of=("self",))
            .select_related("run", "session", "decided_by")
            .filter(pk__in=ids, run_id__in=list(runs.values_list("pk", flat=True))).order_by("requested_at", "pk")
        )
        return _expire(rows, {approval.run_id: approval.run for approval in rows}, now=now,
                       actor_system=audit.SWEEP, why={"cause": "deadline passed"})

    return walk(due, expire_batch, until=until or budget_deadline(), what="approvals (deadline passed)", share=share)
