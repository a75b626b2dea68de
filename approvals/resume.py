"""Resuming a parked run with its approval: checked, then consumed by one conditional UPDATE."""

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from approvals import cards
from approvals.models import Approval, ApprovalStatus, ReasonCode, ToolCall
from approvals.models.approval import OPEN_STATUSES
from approvals.refusals import Refused, audited, refuse_if_changed
from approvals.suspend import unpark_writes
from audit import chain as audit_chain
from audit import trail as audit
from core.errors import (
    ApprovalConsumed,
    ApprovalExpired,
    ApprovalPending,
    ApprovalRejected,
    ApprovalWithdrawn,
    NotFound,
    PayloadMismatch,
    RunNotSuspendedError,
)
from core.hashing import payload_hash
from core.rows import (
    choice_literal,
    column,
    columns,
    db_value,
    deferred_instance,
    first_row,
    kept,
    reader,
    table,
)
from registry import cache as registry_cache
from registry.policy import Decision
from runs import outbox, spine
from runs.states import RunState
from sessions_app.models import Session


def rejection_detail(approval: Approval) -> str:
    return f"The reviewer rejected this call: {approval.decision_reason}"


def _refuse(approval: Approval, digest: str, now) -> None:
    """Raise the error that explains why `approval` cannot be consumed with `digest` now."""
    if approval.status == ApprovalStatus.REJECTED:
        # The reason reaches the agent, so a model can correct itself.
        raise ApprovalRejected(rejection_detail(approval))
    if approval.status == ApprovalStatus.CONSUMED:
        raise ApprovalConsumed()
    if approval.status == ApprovalStatus.WITHDRAWN:
        raise ApprovalWithdrawn()
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
    An approval given for another patient context than the session's now, or for a
    call the policy in force now blocks, is refused (context_changed, policy_changed):
    nothing is consumed, and the refusal is audited.
    """
    try:
        return _resume(run, approval_id, args, client=client, owned_by=owned_by)
    except Refused as refused:
        raise audited(refused) from None


def _resume(run, approval_id, args, *, client, owned_by) -> tuple[Approval, object]:
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
        approval = _consume(approval_id, locked.pk, digest, now)
        if approval is None:
            current = Approval.objects.filter(pk=approval_id, run=locked).first()
            if current is None:
                raise NotFound("No such approval on this run.")
            _refuse(current, digest, now)
            raise ApprovalConsumed()
        # The approval's own story comes before the run's state (the raise rolls the consume back).
        if locked.state != RunState.SUSPENDED:
            raise RunNotSuspendedError(f"The run is {locked.state}, not suspended.")
        locked.session = approval.session = deferred_instance(Session, id=locked.session_id, **approval.session_now)
        # The session as it is now and the registry's stamp came with the consume (the raise rolls it back).
        refuse_if_changed(
            approval,
            locked,
            approval.approved_args,
            registry_cache.specs(approval.registry_stamp).get(approval.tool),
            kind=audit.Kind.CONSUME,
            actor_client=client,
        )
        if approval.decided_by_id is not None:
            approval.decided_by = deferred_instance(
                User, id=approval.decided_by_id, username=approval.decided_by_username
            )
        if approval.reason_code == ReasonCode.APPROVAL and connection.vendor != "postgresql":
            # The call may run now: the ledger says so (on PostgreSQL, _consume's own statement did).
            ToolCall.objects.filter(run=locked, tool_call_id=approval.tool_call_id).update(decision=Decision.ALLOW)
        # Parallel calls in one step: the run stays parked while other approvals
        # of it are still open, so each of them can still be resumed. One past its
        # deadline is not open, swept or not.
        # The lock above recorded the activity already: a run left parked needs no second touch.
        # Its event and the run's `run.resumed`, if it unparks, go in one INSERT, and that and the
        # run's UPDATE in the audit row's statement (the run is locked already: no lock is taken
        # after the chain head's).
        consumed = outbox.event(
            locked,
            "approval.consumed",
            step_id=approval.step_id,
            data={"approval_id": str(approval.pk)},
            inbox=cards.removed(approval),
        )
        audit.record(
            audit.Kind.CONSUME,
            head=approval.audit_head,
            approval=approval,
            run=locked,
            actor_client=client,
            decision="consumed",
            rule_id=approval.rule_id,
            data={"payload_hash": digest},
            along=unpark_writes(
                locked, step_id=approval.step_id, touched=True, others_open=approval.others_open > 0, events=[consumed]
            ),
        )
    return approval, locked


def _consume(approval_id, run_id, digest: str, now) -> Approval | None:
    """The approved, unexpired approval `approval_id` of `run_id` with `digest`, marked consumed; None if none is.

    RETURNING also brings what resume needs next, read after the run lock was
    granted: how many other approvals of the run are still open, the decider's
    name (the removal notice), the registry's stamp and the session's context
    (`_SESSION_NOW`). On PostgreSQL the ledger's allow for an approval
    proper rides along in the same statement (a data-modifying CTE), so it
    commits or rolls back with the consume; SQLite has no such CTE (resume does it).
    PostgreSQL's statement also locks the session's audit chain head, after the
    approval, and reads it as `audit_head` for the consume's audit row.
    """
    params = [
        ApprovalStatus.CONSUMED,
        db_value(Approval, "consumed_at", now),
        db_value(Approval, "id", approval_id),
        db_value(Approval, "run", run_id),
        ApprovalStatus.APPROVED,
        digest,
        db_value(Approval, "expires_at", now),
    ]
    if connection.vendor == "postgresql":
        params += [Decision.ALLOW, ReasonCode.APPROVAL]
    params.append(db_value(Approval, "expires_at", now))
    row = first_row(kept("resume-consume", _consume_sql, model=Approval), params)
    if row is None:
        return None
    width = len(Approval._meta.concrete_fields)
    approval = reader(Approval)(row[:width])
    approval.others_open, approval.decided_by_username, approval.registry_stamp = row[width : width + 3]
    at = width + 3 + len(_SESSION_NOW)
    approval.session_now = dict(zip(_SESSION_NOW, row[width + 3 : at], strict=True))
    # On PostgreSQL the statement locked the session's audit chain head too (audit/chain.py).
    approval.audit_head = audit_chain.locked_head(row[at:])
    for flag in ("consent", "tainted"):  # SQLite answers 0 or 1
        approval.session_now[flag] = bool(approval.session_now[flag])
    return approval


# What the consume reads of the session, as it is now: the audit row and the removal notice (patient_ref,
# care_unit), the bound context's check (patient_ref, age_band, consent) and the policy's (the taint too).
_SESSION_NOW = ("patient_ref", "care_unit", "age_band", "consent", "tainted")


def _consume_sql(db) -> str:
    approvals, sessions, users, calls = (
        table(Approval, db=db),
        table(Session, db=db),
        table(User, db=db),
        table(ToolCall, db=db),
    )

    def approval(name, qualifier=""):
        return column(Approval, name, qualifier, db=db)

    update = (
        f"UPDATE {approvals} SET {approval('status')} = %s, {approval('consumed_at')} = %s "
        f"WHERE {approval('id')} = %s AND {approval('run')} = %s AND {approval('status')} = %s "
        f"AND {approval('payload_hash')} = %s AND {approval('expires_at')} > %s"
    )

    def extras(row: str) -> str:
        # The run's other open cards, the unexpired ones counted: with the statuses as parameters
        # and the expiry in the WHERE, PostgreSQL re-planned this statement on every resume (its
        # plan for the values at hand looked cheaper than one for any values).
        open_statuses = ", ".join(choice_literal(status) for status in OPEN_STATUSES)
        return (
            f"(SELECT count(*) FILTER (WHERE {approval('expires_at', 'other')} > %s) FROM {approvals} other "
            f"WHERE {approval('run', 'other')} = {approval('run', row)} AND {approval('id', 'other')} <> "
            f"{approval('id', row)} AND {approval('status', 'other')} IN ({open_statuses})) AS others_open, "
            f"(SELECT {column(User, 'username', db=db)} FROM {users} WHERE {column(User, 'id', users, db=db)} = "
            f"{approval('decided_by', row)}) AS decided_by_username, "
            f"({registry_cache.stamp_sql()}) AS registry_stamp, "
            + ", ".join(
                f"(SELECT {column(Session, name, db=db)} FROM {sessions} "
                f"WHERE {column(Session, 'id', sessions, db=db)} = {approval('session', row)}) "
                f"AS session_{name}"
                for name in _SESSION_NOW
            )
        )

    # The approval's columns named, in the model's order (`*` would follow the table's).
    if db.vendor == "postgresql":

        def call(name, qualifier=calls):
            return column(ToolCall, name, qualifier, db=db)

        # The session's audit chain head, locked after the approval (the lateral join reads the
        # consumed row): the order every writer keeps (audit/chain.py). The ledger CTE, which the
        # SELECT does not read, runs after it; only a holder of the run's lock touches that row.
        head_columns, head_join = audit_chain.locked_head_join(
            db, audit_chain.session_chain_sql(approval("session", "consumed"))
        )

        return (
            f"WITH consumed AS ({update} RETURNING *), "
            f"ledger AS (UPDATE {calls} SET {call('decision', '')} = %s FROM consumed "
            f"WHERE {call('run')} = {approval('run', 'consumed')} "
            f"AND {call('tool_call_id')} = {approval('tool_call_id', 'consumed')} "
            f"AND {approval('reason_code', 'consumed')} = %s) "
            f"SELECT {columns(Approval, 'consumed', db=db)}, {extras('consumed')}, {head_columns} "
            f"FROM consumed {head_join}"
        )
    return f"{update} RETURNING {columns(Approval, '', db=db)}, {extras(approvals)}"
