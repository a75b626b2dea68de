"""Refusals the audit log keeps although the change they refused rolled back.

A use of an approval refused because the patient context or the policy changed
(`context_changed`, `policy_changed`) must leave a trace, yet nothing of the
refused request may stay: the run lock's activity touch, a consume, a decision.
The service raises `Refused` inside its transaction, so all of that rolls back;
`audited` then writes the refusal's audit row in a transaction of its own (a
savepoint, under an Idempotency-Key's transaction, which commits the stored answer
with it) and hands back the error the client gets. The gate does the same for its
refused verdicts (approvals/gate.py REFUSED_VERDICTS).
"""

from django.db import transaction

from approvals import audit
from approvals.models.audit import AuditEvent
from condor.errors import CondorError


class Refused(Exception):
    """`error` for the client, and `entry` (an unsaved audit.entry) for the log once the refusal rolled back."""

    def __init__(self, error: CondorError, entry: AuditEvent):
        super().__init__(error.detail)
        self.error, self.entry = error, entry


def audited(refused: Refused) -> CondorError:
    """Write `refused`'s audit row (its own transaction) and return its error, for the caller to raise."""
    with transaction.atomic():
        audit.record_entries([refused.entry])
    return refused.error
