"""The choke point: every tool call an agent wants to make is judged here.

Under the run's row lock the verdict is taken on the session as it is now, then
the call is allowed, blocked, served by a prior grant, or parked through the
suspend funnel; its ledger row, verdict audit and outbox event commit together.
"""

import json
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from agents.models import ApiClient
from approvals import bound_context
from approvals.card_context import parked_context
from approvals.models import Approval, ApprovalStatus, ReasonCode, ToolCall
from approvals.models.approval import OPEN_STATUSES
from approvals.serializers import ApprovalSerializer
from approvals.suspend import (
    GATEABLE_STATES,
    KnownApprovals,
    SuspendRequest,
    closed_refusal,
    contract_hash,
    park_locked,
    persist_suspend,
    read_known,
    suspend_frames,
)
from audit import chain as audit_chain
from audit import trail as audit
from audit.models import AuditEvent
from core.errors import (
    ApprovalConsumed,
    ApprovalExpired,
    ApprovalRejected,
    CondorError,
    ContextChanged,
    NotFound,
    RunNotActiveError,
    ToolCallConflict,
    TooManyPending,
)
from core.hashing import canonical_json, payload_hash
from core.rows import Write, column, columns, db_value, first_row, insert_sql, instance, kept, reader, table
from registry import cache as registry_cache
from registry.policy import Decision, Trust, Verdict, effective_spec, evaluate
from registry.policy import ToolCall as PolicyCall
from registry.policy_in_force import context_of, registered
from runs import frames, spine
from runs.models import Run
from runs.outbox import event_write
from runs.states import RunState
from sessions_app.models import Session

PRIOR_GRANT = "approval.prior-grant"
CANNOT_PARK = "client.cannot-park"
CLARIFICATION_RULE = "clarification.requested"
EXPLANATIONS = {
    PRIOR_GRANT: "A reviewer already approved exactly this call in this session, so it may run once.",
    CANNOT_PARK: "This call needs a clinician's approval, but the calling client cannot wait for one, so it is blocked.",
    CLARIFICATION_RULE: "The agent needs more information to continue.",
}


@dataclass(frozen=True)
class GateCall:
    tool_call_id: str
    step_id: str
    tool: str
    op: str
    args: dict
    metadata: dict


@dataclass(frozen=True)
class GateResult:
    status: int
    body: dict


PARKED = "suspended"  # a ledger row's decision while its call waits on an approval


class _ParkedCall(Exception):
    """An allow or block found its tool_call_id parked: that call's approval decides it, not a new verdict."""


# What a gate call can be answered with after its verdict was taken: the verdict is still audited.
REFUSED_VERDICTS = (ApprovalConsumed, ApprovalExpired, ApprovalRejected, ContextChanged, TooManyPending)


def _effective(run, tool: str):
    """The descriptor the gate applies to `tool` (the registry row over the static entry; None: unknown)."""
    registry = getattr(run, "registry", None)  # the cached registry of a run the gate locked
    return effective_spec(tool, registry.get(tool) if registry is not None else registered(tool))


def judge(run, call: GateCall) -> tuple[Verdict, bool]:
    """The verdict for `call` in `run`'s context, and whether the tool's output is untrusted."""
    session = run.session
    # A run locked by the gate carries the registry as of its lock (registry_cache).
    registry = getattr(run, "registry", None)
    row = registry.get(call.tool) if registry is not None else registered(call.tool)
    verdict = evaluate(
        PolicyCall(tool=call.tool, op=call.op, args=call.args, metadata=call.metadata), context_of(run, session), row
    )
    spec = effective_spec(call.tool, row)
    untrusted = spec is not None and spec.trust == Trust.UNTRUSTED
    return verdict, untrusted


def gate_tool_call(run, call: GateCall, *, client, owned_by=None) -> GateResult:
    """Judge `call` in `run` (a Run or its id) and allow, block, grant or park it, in one transaction.

    `owned_by`: a client whose live sessions the run must belong to (404 otherwise),
    checked in the statement that locks the run.
    """
    run_id = getattr(run, "pk", run)
    try:
        return _judged(run_id, call, client=client, owned_by=owned_by)
    except _ParkedCall:
        # Its verdict changed since it parked (a registry edit, a client that can no longer park):
        # the call stays parked, so its approval request stays the last word for it until a human decides.
        return _answer_for_parked_call(run_id, call, client=client, owned_by=owned_by)
    except REFUSED_VERDICTS as refusal:
        # The refusal rolled the verdict's audit row back with everything else: it is written again.
        _audit_refused(run_id, call, refusal, client=client, owned_by=owned_by)
        raise


def _judged(run_id, call: GateCall, *, client, owned_by) -> GateResult:
    # The verdict is taken under the run lock, on the session as it is now: a taint
    # committed a moment ago (results lock the run to set it) is never missed by an allow.
    with transaction.atomic(durable=True):
        run = _locked_gateable_run(run_id, owned_by=owned_by)
        # A reused tool_call_id is refused by the ledger's upsert (_ledger), which rolls all of this back.
        verdict, untrusted = judge(run, call)
        if verdict.decision != Decision.REQUIRE_APPROVAL:
            return _settle(
                run, call, verdict, untrusted, client=client, decision=verdict.decision, rule_id=verdict.rule_id
            )
        spec = _effective(run, call.tool)
        request = SuspendRequest(
            tool_call_id=call.tool_call_id,
            step_id=call.step_id,
            tool=call.tool,
            op=call.op,
            args=call.args,
            rule_id=verdict.rule_id,
            explanation=verdict.explanation,
            hitl_tier=verdict.effective_tier,
            approvals_required=spec.approvals_required if spec is not None else 1,
            identity_args=spec.identity_args if spec is not None else (),
        )
        now = timezone.now()
        # One read for the cold replay and, if there is none to use, the park.
        known = read_known(run, request, now, prior_grants=True)
        grant = _consume_prior_grant(
            run, call, verdict, untrusted, client=client, candidates=known.prior_grants, now=now
        )
        if grant is not None:
            return grant
        if not client.can_park:
            return _settle(run, call, verdict, untrusted, client=client, decision=Decision.BLOCKED, rule_id=CANNOT_PARK)
        # Parked through the one funnel, in this same transaction.
        return _park(run, call, verdict, untrusted, client=client, request=request, known=known)


def _answer_for_parked_call(run_id, call: GateCall, *, client, owned_by) -> GateResult:
    """The answer a parked call gets when gated again: its approval's, as the same suspend again gets.

    Open (pending, or approved and not yet used): 202 with that card. Rejected, used or
    expired: that error, once the new verdict's audit row (with the card that answered it) is in.
    """
    with transaction.atomic(durable=True):
        run = _locked_gateable_run(run_id, owned_by=owned_by)
        # This very call's card (its contract: the tool, op and args as parked, whatever an edit approved).
        approval = (
            Approval.objects.filter(
                run=run,
                tool_call_id=call.tool_call_id,
                contract_hash=contract_hash(call.tool, call.op, call.args, ReasonCode.APPROVAL),
            )
            .order_by("-requested_at")
            .first()
        )
        if approval is None:  # a parked ledger row always has its approval; fail closed if not
            raise ToolCallConflict(f"Tool call {call.tool_call_id!r} is parked but has no approval.")
        refusal = closed_refusal(approval, timezone.now())
        verdict, _ = judge(run, call)
        audit.record_entries(
            [
                _verdict_entry(
                    run,
                    call,
                    verdict,
                    client=client,
                    parked_on=approval,
                    decision=refusal.code if refusal else PARKED,
                    rule_id=approval.rule_id,
                )
            ],
            head=run.audit_head,
        )
    if refusal is not None:
        raise refusal
    return suspended_result(approval)


def _audit_refused(run_id, call: GateCall, refusal: CondorError, *, client, owned_by) -> None:
    """The audit row of a verdict answered with an error, in a transaction of its own."""
    try:
        with transaction.atomic(durable=True):
            run = _locked_gateable_run(run_id, owned_by=owned_by)
            verdict, _ = judge(run, call)
            audit.record_entries(
                [_verdict_entry(run, call, verdict, client=client, decision=refusal.code, rule_id=verdict.rule_id)],
                head=run.audit_head,
            )
    except (NotFound, RunNotActiveError):
        pass  # the run ended meanwhile: a gate call on it now is refused as that, and not a verdict


def _locked_gateable_run(run_id, *, owned_by=None):
    """The run, locked and touched, with its session (read after the lock was granted), client and registry."""
    if connection.vendor == "postgresql":
        # One statement: the lock, then the session through condor_session_as_of_now, a function
        # with a snapshot of its own (sessions_app migration 0006). Joined as a table, the session
        # would be as this statement's snapshot saw it, from before any wait for the lock, and a
        # taint committed meanwhile would be missed. The client and the registry's stamp come
        # along as of the statement's start: nothing orders their changes with the run's lock.
        # The session's audit chain head is locked last, in the same statement: every row the gate
        # may wait for after it is its own run's (the run lock keeps everyone else away) or is taken
        # without waiting (a prior grant of another run: _consume_prior_grant).
        lock_sql, params = spine.lock_touched_statement(run_id, client=owned_by)
        row = first_row(
            kept(("gate-lock", lock_sql), lambda db: _locked_with_session_sql(db, lock_sql), model=Session), params
        )
        if row is None:
            raise NotFound("No such run.")
        run_columns = len(Run._meta.concrete_fields)
        head_columns = -len(audit_chain.HEAD_COLUMNS)
        run, head, row = reader(Run)(row[:run_columns]), row[head_columns:], row[run_columns:head_columns]
        # No head yet (the session's first audited call): the first append creates and locks it.
        run.audit_head = audit_chain.locked_head(head)
    else:
        # SQLite: a transaction holds the whole database, so the session read next is as of now.
        run = spine.lock_touched_run(run_id, client=owned_by)
        if run is None:
            raise NotFound("No such run.")
        row = first_row(kept("gate-session", _session_sql, model=Session), [db_value(Session, "id", run.session_id)])
        if row is None:
            raise Session.DoesNotExist(f"No session {run.session_id}.")
    if run.state not in GATEABLE_STATES:
        raise RunNotActiveError(f"The run is {run.state}; tool calls are gated only while it executes.")
    width = len(Session._meta.concrete_fields)
    session = run.session = reader(Session)(row[:width])
    session.client = reader(ApiClient)(row[width:-1])  # for the card a suspend pushes
    session.registry_stamp = row[-1]
    run.registry = registry_cache.specs(session.registry_stamp)
    return run


def _session_and_client(db, sessions: str, *, head: tuple[str, str] = ("", "")) -> str:
    """The columns and joins after the run's: the session (`sessions`: its table or row source), its client,
    the stamp, then `head`'s columns and join if given (audit/chain.py `locked_head_join`)."""
    clients = table(ApiClient, db=db)
    head_columns, head_join = head
    return (
        f"{columns(Session, table='s', db=db)}, {columns(ApiClient, db=db)}, ({registry_cache.stamp_sql()})"
        f"{', ' + head_columns if head_columns else ''} "
        f"FROM {sessions} AS s INNER JOIN {clients} ON ({column(Session, 'client', 's', db=db)} = "
        f"{column(ApiClient, 'id', clients, db=db)}){' ' + head_join if head_join else ''}"
    )


def _locked_with_session_sql(db, lock_sql: str) -> str:
    session_id = column(Run, "session", "locked", db=db)
    chain = audit_chain.session_chain_sql(session_id)
    sessions = f"locked CROSS JOIN LATERAL condor_session_as_of_now({session_id})"
    return (
        f"WITH locked AS ({lock_sql}) SELECT {columns(Run, table='locked', db=db)}, "
        f"{_session_and_client(db, sessions, head=audit_chain.locked_head_join(db, chain))}"
    )


def _session_sql(db) -> str:
    """The session, its client and the registry's stamp: select_related("client") and the stamp, as one text."""
    return f"SELECT {_session_and_client(db, table(Session, db=db))} WHERE {column(Session, 'id', 's', db=db)} = %s"


_LEDGER_UPDATE = ("step_id", "args", "metadata", "decision", "rule_id", "untrusted_tool")


def _ledger(run, call: GateCall, *, decision: str, rule_id: str, untrusted: bool, settles: bool = False) -> Write:
    """The statement that inserts the ledger row, or updates it for a retry of the same call.

    A tool_call_id already gated with another tool, op or args (jsonb equality:
    the same JSON value, as payload_hash compares) updates nothing, and is refused
    once the statement has run. `settles` (an allow or block straight away, or
    another card's grant): nor does a parked one, which only its own approval
    settles (_ParkedCall). SQLite (3.35 and later) runs the same statement.
    """
    args = call.args
    if connection.vendor == "sqlite":
        # SQLite compares JSON as text: stored canonical, the same args in another key order still match.
        args = json.loads(canonical_json(args))
    row = instance(
        ToolCall,
        run_id=run.pk,
        tool_call_id=call.tool_call_id,
        step_id=call.step_id,
        tool=call.tool,
        op=call.op,
        args=args,
        metadata=call.metadata,
        decision=decision,
        rule_id=rule_id,
        untrusted_tool=untrusted,
    )
    insert, params = insert_sql(row, returning=False)

    def refuse_another_call(rows: list) -> None:
        if rows:
            return
        if (
            settles
            and ToolCall.objects.filter(
                run_id=run.pk, tool_call_id=call.tool_call_id, tool=call.tool, op=call.op, args=args, decision=PARKED
            ).exists()
        ):
            raise _ParkedCall()  # this very call, parked
        raise ToolCallConflict(f"Tool call {call.tool_call_id!r} was already gated with another tool, op or args.")

    upsert = kept(("gate-ledger-upsert", settles), lambda db: _upsert_sql(db, settles=settles), model=ToolCall)
    return Write(insert + upsert, params, done=refuse_another_call)


def _upsert_sql(db, *, settles: bool) -> str:
    calls = table(ToolCall, db=db)

    def own(name):
        return column(ToolCall, name, db=db)

    updates = ", ".join(f"{own(name)} = {column(ToolCall, name, 'EXCLUDED', db=db)}" for name in _LEDGER_UPDATE)
    same_call = " AND ".join(
        f"{column(ToolCall, name, calls, db=db)} = {column(ToolCall, name, 'EXCLUDED', db=db)}"
        for name in ("tool", "op", "args")
    )
    if settles:
        same_call += f" AND {column(ToolCall, 'decision', calls, db=db)} <> '{PARKED}'"
    return f" ON CONFLICT ({own('run')}, {own('tool_call_id')}) DO UPDATE SET {updates} WHERE {same_call} RETURNING 1"


def _verdict_entry(
    run, call: GateCall, verdict: Verdict, *, client, decision: str, rule_id: str, parked_on: Approval | None = None
) -> AuditEvent:
    """`parked_on`: the approval that answered a parked call gated again, instead of the verdict."""
    data = {
        "op": call.op,
        "tool_call_id": call.tool_call_id,
        "step_id": call.step_id,
        "policy_class": verdict.policy_class,
        "engine_rule_id": verdict.rule_id,
        "payload_hash": payload_hash(call.args),
        "client_metadata": call.metadata,
    }
    if parked_on is not None:
        data["parked_on"] = str(parked_on.pk)
    return audit.entry(
        audit.Kind.VERDICT,
        run=run,
        approval=parked_on,
        actor_client=client,
        tool=call.tool,
        op=call.op,
        decision=decision,
        rule_id=rule_id,
        data=data,
    )


def _audit_verdict(
    run, call: GateCall, verdict: Verdict, *, client, decision: str, rule_id: str, along: tuple[Write, ...] = ()
) -> None:
    audit.record_entries(
        [_verdict_entry(run, call, verdict, client=client, decision=decision, rule_id=rule_id)],
        along=along,
        head=run.audit_head,
    )


def _settle(run, call, verdict, untrusted, *, client, decision, rule_id) -> GateResult:
    """Allow or block straight away."""
    explanation = EXPLANATIONS.get(rule_id, verdict.explanation)
    chunks = frames.allowed_call_frames(call.tool_call_id, call.tool, call.args)
    if decision == Decision.BLOCKED:
        chunks += frames.result_frames(call.tool_call_id, explanation, is_error=True)
    # The ledger row and the outbox event go in the audit row's statement. The ledger's row
    # lock then comes after the chain head's, which cannot deadlock: every writer of a
    # ledger row holds its run's lock first (gate, resume, results), as this call does.
    _audit_verdict(
        run,
        call,
        verdict,
        client=client,
        decision=decision,
        rule_id=rule_id,
        along=(
            _ledger(run, call, decision=decision, rule_id=rule_id, untrusted=untrusted, settles=True),
            event_write(
                run,
                f"tool.{decision}",
                step_id=call.step_id,
                frames=chunks,
                data={"tool_call_id": call.tool_call_id, "rule_id": rule_id},
            ),
        ),
    )
    return GateResult(
        200,
        {
            "decision": str(decision),
            "rule_id": rule_id,
            "explanation": explanation,
            "tool_call_id": call.tool_call_id,
            "args": call.args,
        },
    )


def _consume_prior_grant(run, call, verdict, untrusted, *, client, candidates, now) -> GateResult | None:
    """Cold replay: an approved, unconsumed, unexpired approval of exactly this call in this session.

    `candidates`: such grants as read (suspend.read_known), oldest decision first. A grant
    given for another patient context than the session's now is not used; if that leaves
    none, the call is refused (context_changed, audited as a refused verdict).
    """
    context = bound_context.of(run.session)
    usable = [grant for grant in candidates if not bound_context.changes(bound_context.bound(grant), context)]
    if candidates and not usable:
        raise bound_context.refusal(bound_context.bound(candidates[0]), context)
    digest = payload_hash(call.args)
    for grant in usable:
        # The same conditional UPDATE as resume: only one caller can win a grant. One that another
        # transaction holds is passed over, not waited for (SKIP LOCKED): the gate holds its
        # session's audit chain head already, which that holder may be about to wait for. Passed
        # over, the call parks on a card of its own and a reviewer decides it again.
        free = Approval.objects.select_for_update(skip_locked=True, of=("self",)).filter(
            pk=grant.pk, status=ApprovalStatus.APPROVED, payload_hash=digest, expires_at__gt=now
        )
        won = Approval.objects.filter(pk__in=free.values("pk")).update(status=ApprovalStatus.CONSUMED, consumed_at=now)
        if won:
            break
    else:
        return None
    grant.status, grant.consumed_at = ApprovalStatus.CONSUMED, now
    # Another card's grant never settles this call if it is parked on a card of its own (_ParkedCall
    # rolls the grant's use back too): that card, perhaps rejected, answers it.
    own = grant.run_id == run.pk and grant.tool_call_id == call.tool_call_id
    _audit_verdict(
        run,
        call,
        verdict,
        client=client,
        decision=Decision.ALLOW,
        rule_id=PRIOR_GRANT,
        along=(_ledger(run, call, decision=Decision.ALLOW, rule_id=PRIOR_GRANT, untrusted=untrusted, settles=not own),),
    )
    audit.record(
        audit.Kind.CONSUME,
        head=run.audit_head,
        approval=grant,
        run=run,
        actor_client=client,
        decision="consumed",
        rule_id=PRIOR_GRANT,
        data={"run_id": str(run.pk)},
        along=(
            event_write(
                run,
                "tool.allow",
                step_id=call.step_id,
                frames=frames.allowed_call_frames(call.tool_call_id, call.tool, grant.approved_args),
                data={"tool_call_id": call.tool_call_id, "rule_id": PRIOR_GRANT, "approval_id": str(grant.pk)},
            ),
        ),
    )
    if (
        run.state == RunState.SUSPENDED
        and not Approval.objects.filter(run=run, status__in=OPEN_STATUSES, expires_at__gt=now).exists()
    ):
        # The grant was this run's last open gate: using it unparks the run, as a resume would.
        spine.resume_locked(run, step_id=call.step_id)
    return GateResult(
        200,
        {
            "decision": str(Decision.ALLOW),
            "rule_id": PRIOR_GRANT,
            "explanation": EXPLANATIONS[PRIOR_GRANT],
            "tool_call_id": call.tool_call_id,
            "args": grant.approved_args,
            "approval_id": str(grant.pk),
        },
    )


def _park(run, call, verdict, untrusted, *, client, request: SuspendRequest, known: KnownApprovals) -> GateResult:
    # The card's context: what this call carries, and the turn that led to it (read with `known`). A
    # call parked already needs none: park_locked answers with that card.
    context = parked_context(known.parked, run, call.metadata, call.tool_call_id) if known.existing is None else None
    ledger = _ledger(run, call, decision=PARKED, rule_id=verdict.rule_id, untrusted=untrusted)
    verdict_row = _verdict_entry(
        run, call, verdict, client=client, decision=Decision.REQUIRE_APPROVAL, rule_id=verdict.rule_id
    )
    approval, _ = park_locked(
        run,
        request,
        request.resume_schema(),
        client=client,
        writes=(ledger,),
        first_audit=verdict_row,
        known=known,
        card_context=context,
    )
    return suspended_result(approval)


def request_clarification(run, body: dict, *, client) -> GateResult:
    """Park the run on a question to the reviewer (the same funnel as an approval).

    A client that cannot park gets `blocked / client.cannot-park` here too: never a
    form it could not wait for.
    """
    request = SuspendRequest(
        tool_call_id=body["tool_call_id"],
        step_id=body["step_id"],
        tool=body["tool"],
        op=body["op"],
        args=body["args"],
        kind="clarification",
        message=body["message"],
        missing=tuple(dict(field) for field in body["missing"]),
        rule_id=CLARIFICATION_RULE,
        explanation=EXPLANATIONS[CLARIFICATION_RULE],
        hitl_tier=None,
    )
    if not client.can_park:
        request.resume_schema()  # an unusable form is the caller's error (400) whoever sends it
        with transaction.atomic(durable=True):
            run = _locked_gateable_run(run.pk)
            audit.record(
                audit.Kind.VERDICT,
                head=run.audit_head,
                run=run,
                actor_client=client,
                tool=body["tool"],
                op=body["op"],
                decision=Decision.BLOCKED,
                rule_id=CANNOT_PARK,
                data={"op": body["op"], "tool_call_id": body["tool_call_id"], "kind": "clarification"},
            )
        return GateResult(
            200,
            {
                "decision": str(Decision.BLOCKED),
                "rule_id": CANNOT_PARK,
                "explanation": EXPLANATIONS[CANNOT_PARK],
                "tool_call_id": body["tool_call_id"],
                "args": body["args"],
            },
        )
    approval, _ = persist_suspend(run.pk, request, client=client)
    return suspended_result(approval)


def suspended_result(approval) -> GateResult:
    return GateResult(
        202,
        {
            "decision": "suspended",
            "rule_id": approval.rule_id,
            "explanation": approval.explanation,
            "reason_code": approval.reason_code,
            "approval": ApprovalSerializer(approval).data,
            "frames": suspend_frames(approval),
        },
    )
