"""Resuming a parked run with its approval: checked, then consumed by one conditional UPDATE."""

from django.db import transaction
from django.utils import timezone

from approvals import audit, cards
from approvals.hashing import payload_hash
from approvals.models import Approval, ApprovalStatus, ReasonCode, ToolCall
from approvals.suspend import unpark_if_nothing_open
from approvals.policy import Decision
from condor.errors import (
    ApprovalConsumed,
    ApprovalExpired,
    ApprovalPending,
    ApprovalRejected,
    NotFound,
    PayloadMismatch,
    RunNotSuspendedError,
)
from condor.sql import db_value
from runs import spine
from runs.outbox import record_event
from runs.states import RunState


def rejection_detail(approval: Approval) -> str:
    return f"The reviewer rejected this call: {approval.decision_reason}"


def _refuse(approval: Approval, digest: str, now) -> None:
    """Raise the error that explains why `approval` cannot be consumed with `digest` now."""
    if approval.status == ApprovalStatus.REJECTED:
        # The reason reaches the agent, so a model can correct itself.
        raise ApprovalRejected(rejection_detail(approval))
    if approval.status == ApprovalStatus.CONSUMED:
        raise ApprovalConsumed()
    # The deadline outranks "pending": no decision can come any more (decisions
    # refuse an expired approval), and the sweep may not have run yet.
    if approval.status == ApprovalStatus.EXPIRED or approval.expires_at <= now:
        raise ApprovalExpired()
    if approval.status == ApprovalStatus.PENDING:
        raise ApprovalPending()
    if approval.payload_hash != digest:
        raise PayloadMismatch("The arguments differ from what the reviewer approved; run the approved arguments.")


def resume(run, approval_id, args, *, client, owned_by=None) -> tuple[Approval, object]:
    """Consume `approval_id` for `run` (a Run or its id) if `args` are exactly what was approved.

    Returns (approval, run). `owned_by`: the client whose live sessions the run
    must belong to (404 otherwise), checked by the statement that locks the run.
    """
    digest = payload_hash(args)
    now = timezone.now()
    # Not durable: an Idempotency-Key wraps this in the transaction that stores its answer.
    with transaction.atomic():
        # Lock order everywhere: session, then run, then approvals. The lock records
        # the activity too; a refusal below rolls it back.
        locked = spine.lock_touched_run(getattr(run, "pk", run), client=owned_by)
        if locked is None:
            raise NotFound("No such run.")
        # The single-use guarantee: of any number of concurrent resumes, exactly
        # one UPDATE matches (under the run lock); the rest see 0 rows and are told why.
        approval = Approval.objects.raw(
            f"UPDATE {Approval._meta.db_table} SET status = %s, consumed_at = %s WHERE id = %s AND run_id = %s "
            "AND status = %s AND payload_hash = %s AND expires_at > %s RETURNING *",
            [ApprovalStatus.CONSUMED, db_value(Approval, "consumed_at", now), db_value(Approval, "id", approval_id),
             db_value(Approval, "run", locked.pk), ApprovalStatus.APPROVED, digest,
             db_value(Approval, "expires_at", now)])
        approval = next(iter(approval), None)
        if approval is None:
            current = Approval.objects.filter(pk=approval_id, run=locked).first()
            if current is None:
                raise NotFound("No such approval on this run.")
            _refuse(current, digest, now)
            raise ApprovalConsumed()
        # The approval's own story comes before the run's state (the raise rolls the consume back).
        if locked.state != RunState.SUSPENDED:
            raise RunNotSuspendedError(f"The run is {locked.state}, not suspended.")
        if approval.reason_code == ReasonCode.APPROVAL:
            # The call may run now: the ledger says so, and its result will be accepted.
            ToolCall.objects.filter(run=locked, tool_call_id=approval.tool_call_id).update(decision=Decision.ALLOW)
        # Parallel calls in one step: the run stays parked while other approvals
        # of it are still open, so each of them can still be resumed. One past its
        # deadline is not open, swept or not.
        record_event(locked, "approval.consumed", step_id=approval.step_id,
                     data={"approval_id": str(approval.pk)}, inbox=cards.removed(approval))
        # The lock above recorded the activity already: a run left parked needs no second touch.
        unpark_if_nothing_open(locked, step_id=approval.step_id, now=now, touched=True)
        locked.session = _session_of(locked)
        audit.record(audit.Kind.CONSUME, approval=approval, run=locked, actor_client=client, decision="consumed",
                     rule_id=approval.rule_id, data={"payload_hash": digest})
    return approval, locked


def _session_of(run):
    from sessions_app.models import Session

    return Session.objects.get(pk=run.session_id)
