"""★ The one suspend funnel. Every parked tool call and every clarification goes through here.

Persisting the approval, parking the run, writing the outbox event (whose
frames are the same ones the 202 answer and the stream replay carry) and the
audit entry happen in one transaction: a suspend whose audit row cannot be
written does not happen. Do not add a second path that creates approvals.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from approvals import audit, cards
from approvals.hashing import payload_hash
from approvals.models import Approval, ApprovalStatus, ReasonCode
from approvals.models.approval import OPEN_STATUSES
from approvals.resume_schemas import approval_resume_schema, clarification_resume_schema
from condor.errors import ApprovalConsumed, ApprovalExpired, ApprovalRejected, RunNotActiveError, TooManyPending
from runs import frames, spine
from runs.outbox import record_event, record_events
from runs.states import RunState

GATEABLE_STATES = (RunState.EXECUTING, RunState.SUSPENDED)


def read_reason_code(payload: dict) -> str:
    """The single reader of why a suspend happened: persisting, framing and auditing all ask it."""
    return ReasonCode.CLARIFICATION if payload.get("kind") == "clarification" else ReasonCode.APPROVAL


@dataclass(frozen=True)
class SuspendRequest:
    tool_call_id: str
    step_id: str
    tool: str
    op: str
    args: dict
    rule_id: str
    explanation: str
    hitl_tier: str | None
    kind: str = "approval"
    message: str = ""
    missing: tuple = ()
    approvals_required: int = 1  # the tool's quorum (approvals/quorum.py); clarifications take one answer

    @property
    def reason_code(self) -> str:
        return read_reason_code({"kind": self.kind})

    @property
    def contract_hash(self) -> str:
        return payload_hash({
            "tool": self.tool, "op": self.op, "args": self.args,
            "reason_code": self.reason_code, "missing": list(self.missing),
        })

    def resume_schema(self) -> dict:
        if self.reason_code == ReasonCode.CLARIFICATION:
            return clarification_resume_schema(self.message, list(self.missing))
        return approval_resume_schema()


def suspend_frames(approval: Approval) -> list[dict]:
    return frames.suspend_frames(
        approval_id=str(approval.pk),
        tool_call_id=approval.tool_call_id,
        tool_name=approval.tool,
        input=approval.args,
        reason_code=approval.reason_code,
        message=approval.message or None,
        schema=approval.resume_schema if approval.reason_code == ReasonCode.CLARIFICATION else None,
    )


def _refuse_closed(existing: Approval, now) -> None:
    """The same suspend again is the same card only while that card is still open."""
    if existing.status == ApprovalStatus.CONSUMED:
        raise ApprovalConsumed("This exact call was already approved and used; it cannot be parked again.")
    if existing.status == ApprovalStatus.REJECTED:
        raise ApprovalRejected(f"This exact call was rejected: {existing.decision_reason}")
    if existing.status == ApprovalStatus.EXPIRED or existing.expires_at <= now:
        raise ApprovalExpired("This exact call's approval expired; the run cannot park on it again.")


def _refuse_over_pending_limit(run, now) -> None:
    """A client may keep at most CONDOR_MAX_PENDING_PER_CLIENT cards open (a runaway agent floods no inbox).

    Counted under the run lock but not a client lock: suspends racing on other
    runs of the same client may overshoot by a few, which a flood limit tolerates
    better than serializing every suspend of a client.
    """
    limit = settings.CONDOR_MAX_PENDING_PER_CLIENT
    # Past their deadline they are no longer open, whether or not the sweep has marked them yet.
    open_cards = Approval.objects.filter(
        session__client_id=run.session.client_id, status=ApprovalStatus.PENDING, expires_at__gt=now,
    )
    if open_cards.values("pk")[:limit].count() >= limit:
        raise TooManyPending(
            f"This client already has {limit} approvals waiting for a reviewer; "
            "wait for decisions before parking more."
        )


def persist_suspend(run_id, request: SuspendRequest, *, client=None, alongside=None) -> tuple[Approval, bool]:
    """Park `run_id` on `request`. Returns (approval, created); the same suspend twice is one approval.

    `alongside(run)`, if given, writes the caller's own rows (the gate's ledger
    and verdict) in the same transaction, so they commit or roll back with the park.
    """
    schema = request.resume_schema()  # built first: a caller error must change nothing
    with transaction.atomic(durable=True):
        run = spine.lock_run(run_id)
        # State first: a retried suspend on a run that has ended must not answer "suspended".
        if run.state not in GATEABLE_STATES:
            raise RunNotActiveError(f"The run is {run.state}; only an executing or suspended run can park.")
        return park_locked(run, request, schema, client=client, alongside=alongside)


def park_locked(run, request: SuspendRequest, schema: dict, *, client=None, alongside=None,
                card_context: dict | None = None) -> tuple[Approval, bool]:
    """persist_suspend's work inside the caller's transaction, on a run it has locked and found gateable.

    The gate parks this way, in the transaction that judged the call (one
    transaction a request, no savepoint). `card_context`: the new card's context
    when the caller knows it (cards.card looks it up otherwise).
    """
    contract_hash = request.contract_hash
    if alongside is not None:
        alongside(run)
    now = timezone.now()
    # One read for two questions: is this the same suspend again, and which grants does
    # the run hold (the new card names them).
    existing, granted = None, []
    for row in (Approval.objects.filter(run=run)
                .filter(Q(step_id=request.step_id, contract_hash=contract_hash)
                        | Q(status=ApprovalStatus.APPROVED, expires_at__gt=now))
                .select_related("decided_by").order_by("decided_at")):
        if row.step_id == request.step_id and row.contract_hash == contract_hash:
            existing = row
        if row.status == ApprovalStatus.APPROVED and row.expires_at > now:
            granted.append(cards.sibling(row))
    if existing is not None:
        _refuse_closed(existing, now)
        return existing, False
    _refuse_over_pending_limit(run, now)
    approval = Approval.objects.create(
        run=run,
        session=run.session,
        tool=request.tool,
        op=request.op,
        tool_call_id=request.tool_call_id,
        step_id=request.step_id,
        contract_hash=contract_hash,
        reason_code=request.reason_code,
        rule_id=request.rule_id,
        explanation=request.explanation,
        hitl_tier=request.hitl_tier,
        message=request.message,
        args=request.args,
        payload_hash=payload_hash(request.args),
        resume_schema=schema,
        approvals_required=request.approvals_required,
        requested_at=now,
        expires_at=now + timedelta(seconds=settings.CONDOR_APPROVAL_TTL_SECONDS),
    )
    spine._suspend(run)
    record_event(
        run, "approval.suspended", step_id=request.step_id,
        data={"approval_id": str(approval.pk), "state": run.state},
        frames=suspend_frames(approval),
        inbox=cards.added(approval, run_granted=granted, context=card_context),
    )
    audit.record(
        audit.Kind.SUSPEND, approval=approval, run=run, actor_client=client or run.session.client,
        decision="suspended",
        rule_id=approval.rule_id,
        data={"reason_code": approval.reason_code, "op": approval.op, "hitl_tier": approval.hitl_tier,
              "step_id": approval.step_id},
    )
    return approval, True


def unpark_if_nothing_open(run, *, step_id: str, now=None, touched: bool = False,
                           others_open: bool | None = None, events: list[dict] | tuple = ()) -> None:
    """A suspended run whose last open approval was just used or denied goes back to executing.

    One still open (pending, or approved and not yet resumed) keeps it parked, so
    that one can still be decided or resumed; the agent may meanwhile gate a new
    proposal, since a suspended run is gateable. An approval past its deadline is
    not open, swept or not. Resume and the decisions both end here. `touched`:
    the caller's lock already recorded the activity (spine.lock_touched_run).
    `others_open`: the caller has counted them already, under the run lock.
    `events`: the caller's own unsaved events (outbox.event), written before
    `run.resumed` in the same INSERT.
    """
    if run.state == RunState.SUSPENDED and others_open is None:
        others_open = Approval.objects.filter(
            run=run, status__in=OPEN_STATUSES, expires_at__gt=now or timezone.now()).exists()
    if run.state != RunState.SUSPENDED or others_open:
        if events:
            record_events(list(events))
        if run.state == RunState.SUSPENDED and not touched:
            spine.touch(run.pk)
    else:
        spine._resume(run, step_id=step_id, along=list(events))
