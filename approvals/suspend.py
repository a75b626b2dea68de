"""★ The one suspend funnel. Every parked tool call and every clarification goes through here.

Persisting the approval, parking the run, writing the outbox event (whose
frames are the same ones the 202 answer and the stream replay carry) and the
audit entry happen in one transaction: a suspend whose audit row cannot be
written does not happen. Do not add a second path that creates approvals.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from approvals import bound_context, cards, locked_args
from approvals.card_context import parked_context, parked_params, parked_sql
from approvals.models import Approval, ApprovalStatus, ReasonCode
from approvals.models.approval import OPEN_STATUSES
from approvals.resume_schemas import approval_resume_schema, clarification_resume_schema
from audit import trail as audit
from audit.models import AuditEvent
from core.errors import (
    ApprovalConsumed,
    ApprovalExpired,
    ApprovalRejected,
    CondorError,
    RunNotActiveError,
    TooManyPending,
)
from core.hashing import payload_hash
from core.rows import (
    Write,
    choice_literal,
    column,
    columns,
    db_value,
    insert_if_sql,
    kept,
    reader,
    run_together,
    table,
)
from runs import frames, spine
from runs.outbox import event_write, events_write
from runs.states import RunState

GATEABLE_STATES = (RunState.EXECUTING, RunState.SUSPENDED)


def read_reason_code(payload: dict) -> str:
    """The single reader of why a suspend happened: persisting, framing and auditing all ask it."""
    return ReasonCode.CLARIFICATION if payload.get("kind") == "clarification" else ReasonCode.APPROVAL


def contract_hash(tool: str, op: str, args: dict, reason_code: str, missing=()) -> str:
    """What makes a suspend the same suspend (with its run and step): the call, why it parked, what it asks."""
    # A plain str for the reason, not the enum: the bytes are the same (RFC 8785 writes a str
    # subclass as its text), but an enum sends the whole value to the slow reference encoder
    # (core/hashing.py `_plain_json`).
    return payload_hash(
        {"tool": tool, "op": op, "args": args, "reason_code": str(reason_code), "missing": list(missing)}
    )


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
    identity_args: tuple = ()  # the tool's args that name the patient besides the usual names (locked_args.py)

    @property
    def reason_code(self) -> str:
        return read_reason_code({"kind": self.kind})

    @cached_property
    def contract_hash(self) -> str:
        # Asked twice a suspend (the same-suspend lookup and the row), so kept.
        return contract_hash(self.tool, self.op, self.args, self.reason_code, self.missing)

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


def closed_refusal(existing: Approval, now) -> CondorError | None:
    """The error the same suspend again gets once its card is closed (None while it is open)."""
    if existing.status == ApprovalStatus.CONSUMED:
        return ApprovalConsumed("This exact call was already approved and used; it cannot be parked again.")
    if existing.status == ApprovalStatus.REJECTED:
        return ApprovalRejected(f"This exact call was rejected: {existing.decision_reason}")
    if existing.status == ApprovalStatus.EXPIRED or existing.expires_at <= now:
        return ApprovalExpired("This exact call's approval expired; the run cannot park on it again.")
    return None


@dataclass(frozen=True)
class KnownApprovals:
    """What parking a call needs to know of the approvals already there: one read (`read_known`)."""

    existing: Approval | None  # the same suspend again: same run, step and contract
    granted: list[dict]  # the run's live grants, which the new card names (cards.sibling)
    prior_grants: list[Approval]  # the session's live grants of exactly this call (the gate's cold replay)
    parked: tuple  # the call's turn and taint, as card_context.parked_sql reads them (card_context.parked_context)


def read_known(run, request: SuspendRequest, now, *, prior_grants: bool = False) -> KnownApprovals:
    """One query for the questions a park asks, and the gate's cold replay too when `prior_grants`.

    A prior grant is an approval proper (an answered clarification is `approved` too,
    but nobody approved running the tool) of the same tool, op and payload anywhere
    in the session, still unused and unexpired; they come oldest decision first. The
    new card's turn and taint come along (card_context.parked_sql): a park needs them,
    and they cost this statement two index probes rather than a round trip of their own.
    """
    tainted = run.session.tainted
    run_key, expires = db_value(Approval, "run", run.pk), db_value(Approval, "expires_at", now)
    same_suspend = [run_key, request.step_id, request.contract_hash]
    asked = [*same_suspend, run_key, expires]  # which question a row answers: same_suspend, run_grant
    found = [*same_suspend, run_key]  # which rows may answer one (the WHERE)
    if prior_grants:
        grant = [db_value(Approval, "session", run.session_id), request.tool, request.op, payload_hash(request.args)]
        asked += [expires, *grant]
        found += grant
    sql, context_width = kept(
        ("read_known", prior_grants, tainted), lambda db: _known_sql(db, prior_grants, tainted), model=Approval
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, asked + parked_params(run, now) + found)
        rows = cursor.fetchall()
    existing, granted, grants = None, [], []
    width, users = len(Approval._meta.concrete_fields), len(User._meta.concrete_fields)
    read_approval, read_user = reader(Approval), reader(User)
    decided_by = Approval._meta.get_field("decided_by")
    # The same on every row; with no approval to answer, the one row holds only these (nulls after).
    parked = rows[0][:context_width]
    for values in (row[context_width:] for row in rows):
        if values[0] is None:
            continue
        row = read_approval(values[:width])
        decider = values[width : width + users]
        decided_by.set_cached_value(row, read_user(decider) if decider[0] is not None else None)
        same_suspend, run_grant = values[width + users : width + users + 2]
        if same_suspend:
            existing = row
        if run_grant:
            granted.append(cards.sibling(row))
        if prior_grants and values[-1]:
            grants.append(row)
    return KnownApprovals(existing=existing, granted=granted, prior_grants=grants, parked=parked)


def _known_sql(db, prior_grants: bool, tainted: bool) -> tuple[str, int]:
    """read_known's statement, and how many columns of the parking call's context (its turn and taint) it
    starts with; then come each approval the park asks about, its decider (select_related), and which
    question it answers. The ORM compiled the same query, with these questions as annotations, every
    call. Parameters: the questions', card_context.parked_params, the join's."""
    approvals, users = table(Approval, db=db), table(User, db=db)

    def col(name):
        return column(Approval, name, approvals, db=db)

    # The join names the rows that may answer a question, and the SELECT which one each answers.
    # The join's estimates must not depend on the values, or PostgreSQL plans this statement
    # afresh on every suspend (a plan for the values at hand looks cheaper than one for any):
    # it leaves out the expiry, writes the statuses in, and hands the run and the session over
    # as subqueries, whose values the planner does not look at (a run that parked a thousand
    # cards would otherwise make every other run's estimate differ from the average).
    granted = f"{col('status')} = {choice_literal(ApprovalStatus.APPROVED)}"
    live = f"{granted} AND {col('expires_at')} > %s"

    def same_suspend(run):
        return f"({col('run_id')} = {run} AND {col('step_id')} = %s AND {col('contract_hash')} = %s)"

    def grant(session):
        return (
            f"{col('session_id')} = {session} AND {col('tool')} = %s AND {col('op')} = %s AND "
            f"{col('reason_code')} = {choice_literal(ReasonCode.APPROVAL)} AND {col('payload_hash')} = %s"
        )

    unseen = _unseen_uuid(db)
    questions = [same_suspend("%s"), f"({col('run_id')} = %s AND {live})"]  # same_suspend, run_grant
    candidates = [same_suspend(unseen), f"({col('run_id')} = {unseen} AND {granted})"]
    if prior_grants:
        questions.append(f"({live} AND {grant('%s')})")  # prior_grant
        candidates.append(f"({granted} AND {grant(unseen)})")
    parked_columns, parked_joins = parked_sql(db, tainted)
    selected = [*parked_columns, columns(Approval, db=db), columns(User, db=db), *questions]
    # A one-row source LEFT JOINed to the rest: no approval that answers is still the context's row.
    return (
        f"SELECT {', '.join(selected)} "
        f"FROM (SELECT 1 AS one) AS here {parked_joins} "
        f"LEFT OUTER JOIN {approvals} ON ({' OR '.join(candidates)}) "
        f"LEFT OUTER JOIN {users} ON ({col('decided_by')} = {column(User, 'id', users, db=db)}) "
        f"ORDER BY {col('decided_at')} ASC",
        len(parked_columns),
    )


def _unseen_uuid(db) -> str:
    """A uuid parameter whose value PostgreSQL's planner does not look at (a scalar subquery's)."""
    return "(SELECT %s::uuid)" if db.vendor == "postgresql" else "%s"


def _insert_under_pending_limit(approval: Approval, run, now) -> Write:
    """The approval's INSERT, made only while its client has fewer than CONDOR_MAX_PENDING_PER_CLIENT
    cards open (a runaway agent floods no inbox): the count and the insert are one statement.

    Counted under the run lock but not a client lock: suspends racing on other
    runs of the same client may overshoot by a few, which a flood limit tolerates
    better than serializing every suspend of a client.
    """
    limit = settings.CONDOR_MAX_PENDING_PER_CLIENT
    counted = kept(("open-cards", limit), lambda db: _open_cards(approval.client_id, now, limit, db)[0], model=Approval)
    params = [
        db_value(Approval, "client", approval.client_id),
        ApprovalStatus.PENDING,
        db_value(Approval, "expires_at", now),
    ]

    def inserted(ids: list) -> None:
        if not ids:
            raise TooManyPending(
                f"This client already has {limit} approvals waiting for a reviewer; "
                "wait for decisions before parking more."
            )
        approval._state.adding, approval._state.db = False, connection.alias

    return Write(
        *insert_if_sql(approval, (f"(SELECT COUNT(*) FROM ({counted}) AS open_cards) < %s", [*params, limit])),
        done=inserted,
    )


def _open_cards(client_id, now, limit: int, db) -> tuple[str, list]:
    """The client's open cards, at most `limit` of them; its parameters: the client, the status, now.

    Past their deadline they are no longer open, whether or not the sweep has marked them yet.
    """

    def col(name):
        return column(Approval, name, db=db)

    sql = (
        f"SELECT {col('id')} FROM {table(Approval, db=db)} WHERE {col('client')} = %s "
        f"AND {col('status')} = %s AND {col('expires_at')} > %s LIMIT {int(limit)}"
    )
    return sql, [db_value(Approval, "client", client_id), ApprovalStatus.PENDING, db_value(Approval, "expires_at", now)]


def persist_suspend(run_id, request: SuspendRequest, *, client=None) -> tuple[Approval, bool]:
    """Park `run_id` on `request`. Returns (approval, created); the same suspend twice is one approval."""
    schema = request.resume_schema()  # built first: a caller error must change nothing
    with transaction.atomic(durable=True):
        run = spine.lock_run(run_id)
        # State first: a retried suspend on a run that has ended must not answer "suspended".
        if run.state not in GATEABLE_STATES:
            raise RunNotActiveError(f"The run is {run.state}; only an executing or suspended run can park.")
        return park_locked(run, request, schema, client=client)


def park_locked(
    run,
    request: SuspendRequest,
    schema: dict,
    *,
    client=None,
    writes: Sequence[Write] = (),
    first_audit: AuditEvent | None = None,
    known: KnownApprovals | None = None,
    card_context: dict | None = None,
) -> tuple[Approval, bool]:
    """persist_suspend's work inside the caller's transaction, on a run it has locked and found gateable.

    The gate parks this way, in the transaction that judged the call (one
    transaction a request, no savepoint), with its own rows: `writes` (its ledger
    upsert) and `first_audit`, its verdict's audit row (an unsaved `audit.entry`),
    linked before the suspend's in the same statement. `known`: read_known's
    answer, when the caller has it already. `card_context`: the new card's context
    when the caller knows it (the gate's, with the call's rationale); else a park
    without one (a clarification) takes it from `known` (card_context.parked_context).

    Round trips on PostgreSQL: one statement with both audit rows (their chain head's
    move by two links; the head is locked by the gate's run lock, or by a statement of
    its own before this one: audit/chain.py), the caller's writes, the
    approval's INSERT with the pending count, the run's new state and the outbox event
    (core.rows.run_together). The new approval row is taken
    after the head: no other transaction can wait on a row not yet committed, and the
    run lock keeps another insert of the same suspend away, so the lock order (run →
    approvals → head) still holds for every row anyone can wait on.
    """
    now = timezone.now()
    if known is None:
        known = read_known(run, request, now)
    if known.existing is not None:
        # The same suspend again is the same card only while that card is still open. Refused,
        # nothing is written (the gate audits a refused verdict on its own: gate.REFUSED_VERDICTS).
        refusal = closed_refusal(known.existing, now)
        if refusal is not None:
            raise refusal
        if first_audit is not None:
            audit.record_entries([first_audit], along=writes, head=run.audit_head)
        else:
            run_together(list(writes))
        return known.existing, False
    session = run.session
    approval = Approval(
        run=run,
        session=session,
        client_id=session.client_id,
        # The patient context the card shows, and what it binds (approvals/bound_context.py).
        bound_context=bound_context.of(session),
        tool=request.tool,
        op=request.op,
        tool_call_id=request.tool_call_id,
        step_id=request.step_id,
        contract_hash=request.contract_hash,
        reason_code=request.reason_code,
        rule_id=request.rule_id,
        explanation=request.explanation,
        hitl_tier=request.hitl_tier,
        message=request.message,
        args=request.args,
        payload_hash=payload_hash(request.args),
        locked_args=locked_args.card_paths(
            request.args, identity_args=request.identity_args, patient_ref=session.patient_ref
        ),
        resume_schema=schema,
        approvals_required=request.approvals_required,
        requested_at=now,
        expires_at=now + timedelta(seconds=settings.CONDOR_APPROVAL_TTL_SECONDS),
    )
    parked = spine.suspend_locked(run)
    park = [
        *writes,
        _insert_under_pending_limit(approval, run, now),
        parked,
        event_write(
            run,
            "approval.suspended",
            step_id=request.step_id,
            data={"approval_id": str(approval.pk), "state": run.state},
            frames=suspend_frames(approval),
            inbox=cards.added(
                approval,
                run_granted=known.granted,
                context=card_context or parked_context(known.parked, run, {}, request.tool_call_id),
            ),
        ),
    ]
    suspended = audit.entry(
        audit.Kind.SUSPEND,
        approval=approval,
        run=run,
        actor_client=client or run.session.client,
        decision="suspended",
        rule_id=approval.rule_id,
        data={
            "reason_code": approval.reason_code,
            "op": approval.op,
            "hitl_tier": approval.hitl_tier,
            "step_id": approval.step_id,
        },
    )
    audit.record_entries(
        [suspended] if first_audit is None else [first_audit, suspended], along=park, head=run.audit_head
    )
    return approval, True


def unpark_if_nothing_open(
    run,
    *,
    step_id: str,
    now=None,
    touched: bool = False,
    others_open: bool | None = None,
    events: list[dict] | tuple = (),
) -> None:
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
    run_together(unpark_writes(run, step_id=step_id, now=now, touched=touched, others_open=others_open, events=events))


def unpark_writes(
    run,
    *,
    step_id: str,
    now=None,
    touched: bool = False,
    others_open: bool | None = None,
    events: list[dict] | tuple = (),
) -> list[Write]:
    """`unpark_if_nothing_open` as statements for the caller to send with its own (core.rows.run_together)."""
    if run.state == RunState.SUSPENDED and others_open is None:
        others_open = Approval.objects.filter(
            run=run, status__in=OPEN_STATUSES, expires_at__gt=now or timezone.now()
        ).exists()
    if run.state == RunState.SUSPENDED and not others_open:
        return spine.resume_locked_writes(run, step_id=step_id, along=list(events))
    writes = [events_write(list(events))] if events else []
    if run.state == RunState.SUSPENDED and not touched:
        writes.append(spine.touch_write(run))
    return writes
