"""Claims: a reviewer says "I am working on this card" so two reviewers do not work one card at once.

A claim lives CONDOR_CLAIM_TTL_SECONDS; the holder claiming again renews it, anyone
else is refused (409 `approval_claimed`, naming the holder) while it lives, and so is
their decision (decisions.py asks `refuse_if_claimed_by_other`). The holder releases
it, or a decision ends it. An expired claim needs no sweep: it is simply not live any
more (`live_holder`). Nobody ends a card another reviewer holds: not by deciding it,
nor by ending its run (`refuse_if_run_claimed_by_other`). A claim whose holder can no
longer see the card is void (claim_voids.py). Every change is pushed to the inbox as
`card.updated` and audited (`claim`: claimed / renewed / released / voided).
"""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals import cards
from approvals.locking import lock_pending
from approvals.models import Approval, ApprovalStatus
from approvals.visibility import sees_approval
from audit import trail as audit
from core.errors import ApprovalClaimed
from runs.outbox import record_event


def live_holder(approval: Approval, now):
    """The user holding a live claim on `approval`, or None."""
    if approval.claimed_by_id is None or approval.claim_expires_at is None or approval.claim_expires_at <= now:
        return None
    return approval.claimed_by


def refuse_if_claimed_by_other(approval: Approval, user, now) -> None:
    holder = live_holder(approval, now)
    if holder is not None and holder.pk != user.pk:
        raise ApprovalClaimed(
            f"{holder.get_username()} is reviewing this approval "
            f"(claimed until {approval.claim_expires_at.isoformat()})."
        )


def refuse_if_run_claimed_by_other(run, user, now, *, besides: Approval | None = None) -> None:
    """409 while another reviewer holds a live claim on an open card of `run`, which `user` would end
    by ending the run (a stop, a rejection that stops it). `besides`: the card acted on, checked apart.

    The caller holds the run's lock, which every claim takes first: none can start meanwhile.
    """
    held = (
        Approval.objects.filter(run_id=run.pk, status=ApprovalStatus.PENDING, claim_expires_at__gt=now)
        .exclude(claimed_by=user)
        .exclude(claimed_by__isnull=True)
        .select_related("claimed_by")
    )
    if besides is not None:
        held = held.exclude(pk=besides.pk)
    other = held.order_by("claim_expires_at").first()
    if other is not None:
        raise ApprovalClaimed(
            f"{other.claimed_by.get_username()} is reviewing a card of this run "
            f"({' · '.join(filter(None, (other.tool, other.op)))}, claimed until "
            f"{other.claim_expires_at.isoformat()}); ending the run would withdraw it."
        )


def end_claim(approval: Approval) -> None:
    """Drop the claim on the in-memory row (a decision ends it); the caller saves."""
    approval.claimed_by, approval.claim_expires_at = None, None


@transaction.atomic(durable=True)
def claim(approval_id, *, user) -> Approval:
    """Claim (or, for the holder, renew) the pending `approval_id` for `user` (404 if not theirs to see)."""
    approval, run = lock_pending(approval_id, visible=sees_approval(user))
    now = timezone.now()
    refuse_if_claimed_by_other(approval, user, now)
    renewing = live_holder(approval, now) is not None
    approval.claimed_by = user
    approval.claim_expires_at = now + timedelta(seconds=settings.CONDOR_CLAIM_TTL_SECONDS)
    approval.save(update_fields=["claimed_by", "claim_expires_at"])
    _publish(approval, run, user, "renewed" if renewing else "claimed")
    return approval


@transaction.atomic(durable=True)
def release(approval_id, *, user) -> None:
    """The holder gives the card back; 409 while another holds it.

    Releasing a claim nobody holds (it expired, or was released already) changes
    nothing and is no error: DELETE is idempotent, and a page may release late.
    """
    approval, run = lock_pending(approval_id, visible=sees_approval(user))
    now = timezone.now()
    refuse_if_claimed_by_other(approval, user, now)
    if live_holder(approval, now) is None:
        return
    end_claim(approval)
    approval.save(update_fields=["claimed_by", "claim_expires_at"])
    _publish(approval, run, user, "released")


def _publish(approval: Approval, run, user, what: str) -> None:
    record_event(
        run,
        f"approval.claim_{what}",
        step_id=approval.step_id,
        data={"approval_id": str(approval.pk), "claimed_by": user.get_username()},
        inbox=cards.updated(approval),
    )
    audit.record(
        audit.Kind.CLAIM,
        head=approval.audit_head,
        approval=approval,
        run=run,
        actor_user=user,
        decision=what,
        rule_id=approval.rule_id,
        data={"claim_expires_at": approval.claim_expires_at.isoformat() if approval.claim_expires_at else None},
    )
