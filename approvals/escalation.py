"""Escalation: a card still undecided at CONDOR_ESCALATE_AFTER_FRACTION of its TTL is escalated once.

The sweep (runs/sweep.py) calls `escalate_due`. Each card is escalated in its own
small transaction with a conditional re-check under the row lock (`escalated_at`
still null), so two beats running at once escalate it exactly once: `escalated_at`
set, an `escalation` audit row, a `card.updated` push (the inbox shows the badge and
puts the card first) and, after commit, one email to the reviewers who can see it.
"""

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, Value
from django.utils import timezone

from approvals import audit, cards
from approvals.models import Approval, ApprovalStatus
from approvals.visibility import reviewer_scope
from condor.auth import REVIEWERS
from runs.models import Run
from runs.outbox import record_event

logger = logging.getLogger(__name__)


def _due(now):
    """Pending, never escalated, not yet expired, and past the fraction of their TTL."""
    share = ExpressionWrapper((F("expires_at") - F("requested_at")) * Value(settings.CONDOR_ESCALATE_AFTER_FRACTION),
                              output_field=DurationField())
    escalate_at = ExpressionWrapper(F("requested_at") + share, output_field=DateTimeField())
    return Approval.objects.filter(status=ApprovalStatus.PENDING, escalated_at__isnull=True,
                                   expires_at__gt=now).alias(escalate_at=escalate_at).filter(escalate_at__lte=now)


def escalate_due(*, now=None, batch: int = 500) -> int:
    """Escalate the approvals that are due; returns how many this pass escalated."""
    now = now or timezone.now()
    count = 0
    for pk, run_id in list(_due(now).values_list("pk", "run_id")[:batch]):
        with transaction.atomic():
            # The lock order everywhere: run, then approval. Busy elsewhere: the next pass gets it.
            run = Run.objects.select_for_update(skip_locked=True).select_related("session").filter(pk=run_id).first()
            if run is None:
                continue
            approval = (_due(now).select_for_update(skip_locked=True, of=("self",))
                        .select_related("session__client", "claimed_by").filter(pk=pk).first())
            if approval is None:
                continue  # decided, or escalated by another beat, meanwhile
            approval.escalated_at = now
            approval.save(update_fields=["escalated_at"])
            record_event(run, "approval.escalated", step_id=approval.step_id,
                         data={"approval_id": str(approval.pk)}, inbox=cards.updated(approval))
            recipients = reviewers_who_see(approval)
            audit.record(audit.Kind.ESCALATION, approval=approval, run=run, actor_system=audit.SWEEP,
                         decision="escalated", rule_id=approval.rule_id,
                         data={"expires_at": approval.expires_at.isoformat(), "emailed": len(recipients)})
            transaction.on_commit(lambda approval=approval, to=recipients: _email(approval, to))
            count += 1
    return count


def reviewers_who_see(approval: Approval) -> list[str]:
    """The email addresses of the active reviewers whose teams show this card."""
    unit = approval.session.care_unit
    reviewers = get_user_model().objects.filter(groups__name=REVIEWERS, is_active=True).exclude(email="")
    return sorted({user.email for user in reviewers.distinct()
                   if (scope := reviewer_scope(user)) is not None and scope.sees_unit(unit)})


def _email(approval: Approval, recipients: list[str]) -> None:
    if not recipients:
        return
    session = approval.session
    subject = f"Escalated: {approval.tool} for {session.patient_ref or 'a patient'} is still waiting"
    body = (f"An approval is still undecided and expires at {approval.expires_at.isoformat()}.\n\n"
            f"Tool: {approval.tool} {approval.op}\nPatient: {session.patient_ref}\n"
            f"Care unit: {session.care_unit or '-'}\nRule: {approval.rule_id}\n\nOpen the inbox: /inbox/\n")
    try:
        send_mail(subject, body, None, recipients)
    except Exception:  # the escalation stands (audited, shown); a mail outage must not undo it
        logger.warning("could not email the escalation of approval %s", approval.pk, exc_info=True)
