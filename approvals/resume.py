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


def resume(run, approval_id, args, *, client) -> tuple[Approval, object]:
    """Consume `approval_id` for `run` if `args` are exactly what was approved. Returns (approval, run)."""
    digest = payload_hash(args)
    now = timezone.now()
    approval = Approval.objects.filter(pk=approval_id, run=run).first()
    if approval is None:
        raise NotFound("No such approval on this run.")
    _refuse(approval, digest, now)
    if run.state != RunState.SUSPENDED:
        raise RunNotSuspendedError(f"The run is {run.state}, not suspended.")
    # Not durable: an Idempotency-Key wraps this in the transaction that stores its answer.
    with transaction.atomic():
        # Lock order everywhere: session, then run, then approvals.
        locked = spine.lock_run(run.pk)
        # Re-read under the lock: a concurrent winner has consumed it (and unparked
        # the run); the approval's own story comes before the run's state.
        approval.refresh_from_db()
        _refuse(approval, digest, now)
        if locked.state != RunState.SUSPENDED:
            raise RunNotSuspendedError(f"The run is {locked.state}, not suspended.")
        # The single-use guarantee: of any number of concurrent resumes, exactly
        # one UPDATE matches; the rest see 0 rows and are told why below.
        won = Approval.objects.filter(
            pk=approval.pk, status=ApprovalStatus.APPROVED, payload_hash=digest, expires_at__gt=now
        ).update(status=ApprovalStatus.CONSUMED, consumed_at=now)
        if not won:
            approval.refresh_from_db()
            _refuse(approval, digest, now)
            raise ApprovalConsumed()
        approval.status, approval.consumed_at = ApprovalStatus.CONSUMED, now
        if approval.reason_code == ReasonCode.APPROVAL:
            # The call may run now: the ledger says so, and its result will be accepted.
            ToolCall.objects.filter(run=locked, tool_call_id=approval.tool_call_id).update(decision=Decision.ALLOW)
        # Parallel calls in one step: the run stays parked while other approvals
        # of it are still open, so each of them can still be resumed. One past its
        # deadline is not open, swept or not.
        record_event(locked, "approval.consumed", step_id=approval.step_id,
                     data={"approval_id": str(approval.pk)}, inbox=cards.removed(approval))
        unpark_if_nothing_open(locked, step_id=approval.step_id, now=now)
        audit.record(audit.Kind.CONSUME, approval=approval, run=locked, actor_client=client, decision="consumed",
                     rule_id=approval.rule_id, data={"payload_hash": digest})
    return approval, locked
