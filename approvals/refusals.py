"""Uses of an approval refused because its patient context or the policy changed, and audited anyway.

An approval may not be used (resumed, or approved by a reviewer) once the session's
patient context is not the one its card showed (409 `context_changed`,
approvals/bound_context.py) or the policy in force would block the call (409
`policy_changed`, registry/policy_in_force.py). Such a refusal must leave a trace,
yet nothing of the refused request may stay: the run lock's activity touch, a
consume, a decision. The service raises `Refused` inside its transaction, so all of
that rolls back; `audited` then writes the refusal's audit row in a transaction of
its own (a savepoint under an Idempotency-Key's transaction, which commits the stored
answer with it) and hands back the error the client gets. The gate does the same for
its refused verdicts (approvals/gate.py REFUSED_VERDICTS).
"""

from django.db import transaction

from approvals import bound_context
from approvals.models import ReasonCode
from audit import trail as audit
from audit.models import AuditEvent
from core.errors import CondorError
from registry import policy_in_force


class Refused(Exception):
    """`error` for the client, and `entry` (an unsaved audit.entry) for the log once the refusal rolled back."""

    def __init__(self, error: CondorError, entry: AuditEvent):
        super().__init__(error.detail)
        self.error, self.entry = error, entry


def refuse_if_changed(approval, run, args: dict, registered, *, kind: str, **actor) -> None:
    """Raise Refused if `run`'s session (as it is now) is not `approval`'s patient context, or if the
    policy in force (`registered`: the tool's registry row now) would block running `args`.

    The audit row is of `kind`, by `actor` (actor_user or actor_client), and names both contexts.
    """
    session = run.session
    error = bound_context.refusal(bound_context.bound(approval), bound_context.of(session))
    rule_id = approval.rule_id
    if error is None and approval.reason_code == ReasonCode.APPROVAL:
        verdict = policy_in_force.blocking_verdict(
            approval.tool, approval.op, args, policy_in_force.context_of(run, session), registered
        )
        if verdict is not None:
            error, rule_id = policy_in_force.refusal(verdict), verdict.rule_id
    if error is not None:
        raise Refused(
            error,
            audit.entry(
                kind,
                approval=approval,
                run=run,
                decision=error.code,
                rule_id=rule_id,
                **actor,
                data={
                    "payload_hash": approval.payload_hash,
                    "approval_rule_id": approval.rule_id,
                    "bound_context": bound_context.bound(approval),
                    "session_context": bound_context.of(session),
                },
            ),
        )


def audited(refused: Refused) -> CondorError:
    """Write `refused`'s audit row (its own transaction) and return its error, for the caller to raise."""
    with transaction.atomic():
        audit.record_entries([refused.entry])
    return refused.error
