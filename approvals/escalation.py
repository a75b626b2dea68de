"""Escalation: a card still undecided at CONDOR_ESCALATE_AFTER_FRACTION of its TTL is escalated once.

The sweep (runs/sweep.py) calls `escalate_due`. Each card is escalated in its own
small transaction with a conditional re-check under the row lock (`escalated_at`
still null), so two beats running at once escalate it exactly once: `escalated_at`
set, an `escalation` audit row, a `card.updated` push (the inbox shows the badge and
puts the card first) and, after commit, one email to the reviewers who can see it.

An e-mail that cannot be sent leaves an `escalation` row of its own, decision
`email_failed`, naming the error, and the admin dashboard counts them: one whose headers
Django refuses (BadHeaderError, say a line break in a patient ref) is known before commit
and written with the escalation; one the mail server refuses or never answers, after
commit, in a transaction of its own. The escalation itself stands either way.
"""

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import BooleanField, DateTimeField, F, FloatField, Func, Value
from django.utils import timezone

from agents.auth import REVIEWERS
from approvals import cards
from approvals.models import Approval, ApprovalStatus
from approvals.visibility import reviewer_scope
from audit import trail as audit
from runs.models import Run
from runs.outbox import record_event

logger = logging.getLogger(__name__)

EMAIL_FAILED = "email_failed"  # the decision of the row that says an escalation's e-mail did not leave


class _PastFractionOfTtl(Func):
    """requested_at + (expires_at − requested_at) × fraction <= now, as a condition.

    Django's duration arithmetic cannot write this on SQLite (a duration times a number
    comes back as a float, which its datetime addition reads as NULL, so nothing would ever
    be due under `make run`); there the times are compared as Julian days instead.
    """

    output_field = BooleanField()

    def __init__(self, now, fraction: float):
        super().__init__(
            F("requested_at"),
            F("expires_at"),
            Value(now, output_field=DateTimeField()),
            Value(fraction, output_field=FloatField()),
        )

    def _condition(self, compiler, connection, day):
        (requested, requested_params), (expires, expires_params), (now, now_params), (fraction, fraction_params) = (
            compiler.compile(expression) for expression in self.source_expressions
        )
        sql = f"({day(requested)} + ({day(expires)} - {day(requested)}) * {fraction}) <= {day(now)}"
        return sql, [*requested_params, *expires_params, *requested_params, *fraction_params, *now_params]

    def as_sql(self, compiler, connection, **extra):
        return self._condition(compiler, connection, lambda sql: sql)

    def as_sqlite(self, compiler, connection, **extra):
        return self._condition(compiler, connection, lambda sql: f"julianday({sql})")


def _due(now):
    """Pending, never escalated, not yet expired, and past the fraction of their TTL."""
    return Approval.objects.filter(
        _PastFractionOfTtl(now, settings.CONDOR_ESCALATE_AFTER_FRACTION),
        status=ApprovalStatus.PENDING,
        escalated_at__isnull=True,
        expires_at__gt=now,
    )


def escalate_due(*, now=None, batch: int = 500) -> int:
    """Escalate the approvals that are due; returns how many this pass escalated.

    One card that cannot be escalated (a bad row, a failing lookup) is logged and left for
    the next pass; the others still are escalated in this one.
    """
    now = now or timezone.now()
    count = 0
    for pk, run_id in list(_due(now).values_list("pk", "run_id")[:batch]):
        try:
            count += escalate_one(pk, run_id, now)
        except Exception:
            logger.exception("could not escalate approval %s; the next pass tries again", pk)
    return count


def escalate_one(pk, run_id, now) -> int:
    """Escalate one card in a transaction of its own: 1, or 0 if it is no longer due or is busy."""
    with transaction.atomic():
        # The lock order everywhere: run, then approval. Busy elsewhere: the next pass gets it.
        run = (
            Run.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("session")
            .filter(pk=run_id)
            .first()
        )
        if run is None:
            return 0
        approval = (
            _due(now)
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("session__client", "claimed_by")
            .filter(pk=pk)
            .first()
        )
        if approval is None:
            return 0  # decided, or escalated by another beat, meanwhile
        approval.escalated_at = now
        approval.save(update_fields=["escalated_at"])
        record_event(
            run,
            "approval.escalated",
            step_id=approval.step_id,
            data={"approval_id": str(approval.pk)},
            inbox=cards.updated(approval),
        )
        recipients = reviewers_who_see(approval)
        audit.record(
            audit.Kind.ESCALATION,
            approval=approval,
            run=run,
            actor_system=audit.SWEEP,
            decision="escalated",
            rule_id=approval.rule_id,
            data={"expires_at": approval.expires_at.isoformat(), "recipients": len(recipients)},
        )
        if recipients:
            message = _message(approval, recipients)
            try:
                message.message()  # builds the headers: a bad one fails here, not after commit
            except Exception as error:  # any refusal is reported; none undoes the escalation
                _record_email_failure(approval, run, recipients, error)
            else:
                transaction.on_commit(lambda approval=approval, message=message: _send(approval, message))
        return 1


def reviewers_who_see(approval: Approval) -> list[str]:
    """The email addresses of the active reviewers whose teams show this card."""
    unit = approval.session.care_unit
    reviewers = get_user_model().objects.filter(groups__name=REVIEWERS, is_active=True).exclude(email="")
    return sorted(
        {
            user.email
            for user in reviewers.distinct()
            if (scope := reviewer_scope(user)) is not None and scope.sees_unit(unit)
        }
    )


def _message(approval: Approval, recipients: list[str]) -> EmailMessage:
    session = approval.session
    subject = f"Escalated: {approval.tool} for {session.patient_ref or 'a patient'} is still waiting"
    body = (
        f"An approval is still undecided and expires at {approval.expires_at.isoformat()}.\n\n"
        f"Tool: {approval.tool} {approval.op}\nPatient: {session.patient_ref}\n"
        f"Care unit: {session.care_unit or '-'}\nRule: {approval.rule_id}\n\nOpen the inbox: /inbox/\n"
    )
    return EmailMessage(subject, body, None, recipients)


def _record_email_failure(approval: Approval, run, recipients: list[str], error: Exception) -> None:
    logger.warning("could not email the escalation of approval %s", approval.pk, exc_info=error)
    audit.record(
        audit.Kind.ESCALATION,
        approval=approval,
        run=run,
        actor_system=audit.SWEEP,
        decision=EMAIL_FAILED,
        rule_id=approval.rule_id,
        data={"recipients": len(recipients), "error": f"{type(error).__name__}: {error}"[:500]},
    )


def _send(approval: Approval, message: EmailMessage) -> None:
    try:
        message.send()
    except Exception as error:  # a mail outage must not undo the escalation: it is reported
        try:
            with transaction.atomic():
                _record_email_failure(approval, approval.run, message.to, error)
        except Exception:
            logger.exception("could not audit the failed escalation email of approval %s", approval.pk)
