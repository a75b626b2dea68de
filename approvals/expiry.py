"""Closing open approvals: withdrawn when their run ends, expired (for the sweep) when their time is up."""

from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from approvals import cards
from approvals.decision_frames import decision_frames
from approvals.models import Approval, ApprovalStatus
from approvals.models.approval import OPEN_STATUSES
from audit import trail as audit
from runs import sweep
from runs.models import Run
from runs.outbox import event, record_events
from runs.signals import run_closing
from runs.states import RunState, TerminalReason
from runs.sweep_batches import WHOLE, Share, budget_deadline, walk


def _close_cards(
    approvals,
    runs: dict,
    status: ApprovalStatus,
    *,
    now,
    actor_system: str,
    why: dict,
    actor_user=None,
    actor_client=None,
) -> int:
    """Expire or withdraw `approvals`, locked by the caller, with one UPDATE; their events and audit rows go in at once.

    `runs`: each approval's run by id (a Run, or the ClosingRun a sweep batch is closing).
    """
    if not approvals:
        return 0
    Approval.objects.filter(pk__any=[approval.pk for approval in approvals]).update(
        status=status, decided_at=Coalesce("decided_at", Value(now))
    )
    for approval in approvals:
        approval.status = status
    withdrawn = status == ApprovalStatus.WITHDRAWN
    stopped_by = actor_user.get_username() if actor_user is not None else None

    def notice(approval) -> dict:
        if withdrawn:
            return cards.withdrawn(approval, cause=why["terminal_reason"], stopped_by=stopped_by)
        return cards.removed(approval)

    # The agent hears it like any decision: approved false, reason "expired" or "withdrawn", then the denial.
    record_events(
        [
            event(
                runs[approval.run_id],
                f"approval.{status}",
                step_id=approval.step_id,
                data={"approval_id": str(approval.pk)},
                frames=decision_frames(approval),
                inbox=notice(approval),
            )
            for approval in approvals
        ]
    )
    audit.record_all(
        [
            audit.entry(
                audit.Kind.WITHDRAWAL if withdrawn else audit.Kind.EXPIRY,
                approval=approval,
                actor_system=actor_system,
                actor_user=actor_user,
                actor_client=actor_client,
                decision=str(status),
                rule_id=approval.rule_id,
                data=why,
            )
            for approval in approvals
        ]
    )
    return len(approvals)


def withdraw_for_runs(runs, *, now=None, include_approved: bool = False, actor_user=None, actor_client=None) -> int:
    """Withdraw the pending approvals of `runs`, locked and just closed with one reason (in the caller's transaction).

    SPEC 4: a card whose run was superseded, stopped or closed while it was open is
    `withdrawn`; one already past its deadline (not swept yet) is `expired`, as the sweep
    would have made it. With `include_approved`, approved but unconsumed ones go too: a
    reviewer who stops a run withdraws every grant it still holds, so none can be used
    by a cold replay later. A plain close or a supersede leaves grants consumable until
    their deadline (SPEC section 3). `actor_user` / `actor_client`: who closed the run,
    when someone did.
    """
    by_id = {run.pk: run for run in runs}
    now = now or timezone.now()
    statuses = OPEN_STATUSES if include_approved else (ApprovalStatus.PENDING,)
    open_approvals = list(
        Approval.objects.select_for_update(of=("self",))
        .select_related("session", "decided_by")
        .filter(run_id__any=list(by_id), status__in=statuses)
        .order_by("requested_at", "pk")
    )
    reason = str(runs[0].terminal_reason)
    actor = audit.closing_actor(reason)
    ran_out = [approval for approval in open_approvals if approval.expires_at <= now]
    still_open = [approval for approval in open_approvals if approval.expires_at > now]
    return _close_cards(
        ran_out,
        by_id,
        ApprovalStatus.EXPIRED,
        now=now,
        actor_system=actor,
        why={"cause": "deadline passed", "terminal_reason": reason},
    ) + _close_cards(
        still_open,
        by_id,
        ApprovalStatus.WITHDRAWN,
        now=now,
        actor_system=actor,
        actor_user=actor_user,
        actor_client=actor_client,
        why={"cause": "run ended", "terminal_reason": reason},
    )


def expire_due(*, now=None, until: float | None = None, share: Share = WHOLE) -> int:
    """Expire pending and approved approvals past `expires_at`, a batch a transaction (runs/sweep_batches.py)."""
    now = now or timezone.now()
    due = Approval.objects.filter(status__in=OPEN_STATUSES, expires_at__lte=now)

    def expire_batch(ids) -> int:
        # The lock order everywhere: runs, then approvals, then (in the audit append) the
        # chain heads. A run busy elsewhere is skipped with its approvals; the next pass gets them.
        runs = Run.objects.select_for_update(skip_locked=True, of=("self",)).filter(
            pk__in=Approval.objects.filter(pk__in=ids).values("run_id")
        )
        rows = list(
            due.select_for_update(skip_locked=True, of=("self",))
            .select_related("run", "session", "decided_by")
            .filter(pk__in=ids, run_id__in=list(runs.values_list("pk", flat=True)))
            .order_by("requested_at", "pk")
        )
        return _close_cards(
            rows,
            {approval.run_id: approval.run for approval in rows},
            ApprovalStatus.EXPIRED,
            now=now,
            actor_system=audit.SWEEP,
            why={"cause": "deadline passed"},
        )

    return walk(due, expire_batch, until=until or budget_deadline(), what="approvals (deadline passed)", share=share)


def withdraw_when_runs_close(sender, *, runs, now, include_approved, actor_user, actor_client, **kwargs):
    """`runs.signals.run_closing`'s receiver: a run that closes takes its open cards with it."""
    withdraw_for_runs(
        runs, now=now, include_approved=include_approved, actor_user=actor_user, actor_client=actor_client
    )


def connect() -> None:
    run_closing.connect(withdraw_when_runs_close, dispatch_uid="approvals.expiry.withdraw_when_runs_close")


def abort_orphaned_suspends(*, until: float | None = None, share: Share = WHOLE) -> int:
    """The sweep's step for suspended runs whose approvals have all expired (or were never created):
    each ends `approval_expired`, in batches (runs.sweep.close_due)."""
    due = Run.objects.filter(state=RunState.SUSPENDED).exclude(approvals__status__in=OPEN_STATUSES)
    return sweep.close_due(due, TerminalReason.APPROVAL_EXPIRED, until, share, recheck=True)
