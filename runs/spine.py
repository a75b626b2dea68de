"""The run spine: every change of a run's state, each persisted with its outbox event.

Public functions open their own durable transaction, lock the run row, move the
FSM along a legal edge, write the event, and leave pushing to after-commit.
Helpers prefixed `_` expect the caller's transaction and a locked run.
"""

from datetime import timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_fsm import TransitionNotAllowed

from audit import trail as audit
from core.errors import InvalidPayload, NotFound, RunStateTransitionError
from core.rows import (
    Write,
    column,
    columns,
    db_value,
    first_row,
    kept,
    reader,
    run_together,
    table,
    update_sql,
)
from runs import telemetry
from runs.closing import ClosingRun
from runs.models import Run
from runs.outbox import event, events_write, record_event, record_events
from runs.signals import run_closing
from runs.states import ACTIVE_STATES, CLIENT_TRANSITIONS, RunState, TerminalReason
from sessions_app.models import Session


def lock_run(run_id) -> Run:
    return Run.objects.select_for_update(of=("self",)).select_related("session").get(pk=run_id)


def lock_touched_run(run_id, *, client=None, id_sql: tuple[str, list] | None = None) -> Run | None:
    """Lock the run (of `client`'s live sessions, when given) and record activity, in one statement.

    An UPDATE takes the same row lock a SELECT … FOR UPDATE would; the caller's
    transaction rolls the touch back if it refuses the call. None: no such run.
    The session is not joined: read it after this returns (its row as of now).
    `id_sql`: a subquery (sql, params) giving the run id, instead of `run_id`
    (a decision names only its approval).
    """
    row = first_row(*lock_touched_statement(run_id, client=client, id_sql=id_sql))
    return reader(Run)(row) if row is not None else None


def lock_touched_statement(run_id, *, client=None, id_sql: tuple[str, list] | None = None) -> tuple[str, list]:
    """`lock_touched_run`'s statement (sql, params): an UPDATE … RETURNING the run's columns (`columns(Run)`),
    for a caller that reads more in the same statement (a CTE; the gate)."""
    where, where_params = id_sql if id_sql else (None, [db_value(Run, "id", run_id)])
    now = timezone.now()
    params = [
        db_value(Run, "last_activity_at", now - activity_resolution()),
        db_value(Run, "last_activity_at", now),
        *where_params,
    ]
    if client is not None:
        params.append(db_value(Session, "client", client.pk))
    owned = client is not None
    return kept(("lock_touched_run", where, owned), lambda db: _lock_touched_sql(db, where, owned), model=Run), params


def _lock_touched_sql(db, where: str | None, owned: bool) -> str:
    # A touch within activity_resolution() of the last one keeps the value: the UPDATE then changes
    # no indexed column, so PostgreSQL writes it as a HOT update (no new entry in any of the run's
    # indexes, run_state_activity among them) while it still takes the row lock.
    activity = column(Run, "last_activity_at", db=db)
    sql = (
        f"UPDATE {table(Run, db=db)} SET {activity} = CASE WHEN {activity} >= %s THEN {activity} "
        f"ELSE %s END WHERE {column(Run, 'id', db=db)} = {'(' + where + ')' if where else '%s'}"
    )
    if owned:
        sql += (
            f" AND {column(Run, 'session', db=db)} IN (SELECT {column(Session, 'id', db=db)} "
            f"FROM {table(Session, db=db)} WHERE {column(Session, 'client', db=db)} = %s "
            f"AND {column(Session, 'deleted_at', db=db)} IS NULL)"
        )
    return f"{sql} RETURNING {columns(Run, table='', db=db)}"


def activity_resolution() -> timedelta:
    """How close two touches of a run may be for the second to leave last_activity_at as it is.

    A second, or a tenth of the idle timeout if that is shorter: the idle sweep can then
    see a run at most this much idler than it is, and an agent's burst of gate calls on
    one run rewrites none of the run's indexes.
    """
    return timedelta(seconds=min(1.0, settings.CONDOR_IDLE_TIMEOUT_SECONDS / 10))


def _touch(run: Run) -> None:
    run.last_activity_at = timezone.now()


class Opened(NamedTuple):
    run: Run
    superseded: Run | None  # the session's active run, closed `superseded` by this open (its open cards withdrawn)


def open_run(session, *, autonomy: str | None = None, flow_key: str = "", engine: str = "") -> Run:
    """Open a new run on `session`, superseding the active one if there is one."""
    return open_run_superseding(session, autonomy=autonomy, flow_key=flow_key, engine=engine).run


@transaction.atomic(durable=True)
def open_run_superseding(session, *, autonomy: str | None = None, flow_key: str = "", engine: str = "") -> Opened:
    """`open_run`, saying which run it superseded (the API's 201 names it)."""
    # Locking the session row serialises concurrent opens on it, so the
    # supersede-then-insert below never trips the one-active-run constraint.
    session = Session.objects.locked().get(pk=session.pk)
    if session.deleted_at is not None:
        # Deleted after the view looked it up: the session lock makes this the last word.
        raise NotFound("No such session.")
    superseded = close_active_run(session, TerminalReason.SUPERSEDED)
    now = timezone.now()
    run = Run.objects.create(
        session=session,
        autonomy=autonomy or session.autonomy,
        flow_key=flow_key,
        engine=engine,
        last_activity_at=now,
    )
    record_event(run, "run.opened", data={"state": run.state, "autonomy": run.autonomy})
    return Opened(run, superseded)


def close_active_run(session, reason: TerminalReason, *, actor_client=None) -> Run | None:
    """Close the session's active run, if any, inside the caller's transaction.

    The caller holds the session row lock (lock order: session, run, approvals).
    """
    active = Run.objects.select_for_update().filter(session=session, state__in=[s.value for s in ACTIVE_STATES]).first()
    if active is not None:
        active.session = session
        close_locked_run(active, reason, actor_client=actor_client)
    return active


@transaction.atomic(durable=True)
def transition(run_id, to: str) -> Run:
    """A client-requested move: pending→planning, pending→executing, planning→executing."""
    try:
        target = RunState(to)
    except ValueError:
        raise InvalidPayload(f"'to' must be one of: {', '.join(s.value for s in RunState)}.") from None
    run = lock_run(run_id)
    if target not in CLIENT_TRANSITIONS.get(RunState(run.state), ()):
        raise RunStateTransitionError(f"A run cannot go from {run.state} to {target} by a transition.")
    (run.plan if target == RunState.PLANNING else run.execute)()
    _touch(run)
    run.save()
    record_event(run, "run.transitioned", data={"state": run.state})
    return run


@transaction.atomic(durable=True)
def close(run_id, reason: str, *, summary: str = "", usage: dict | None = None, actor_client=None) -> Run:
    """Close a run with a terminal reason. Closing a closed run returns it unchanged."""
    try:
        reason = TerminalReason(reason)
    except ValueError:
        raise InvalidPayload(f"'reason' must be one of: {', '.join(r.value for r in TerminalReason)}.") from None
    run = lock_run(run_id)
    if run.is_terminal:
        return run  # a second terminal write is an idempotent no-op
    close_locked_run(run, reason, summary=summary, usage=usage, actor_client=actor_client)
    return run


def close_locked_run(run: Run, reason: TerminalReason, **options) -> None:
    """Close one active run: a batch of one (`close_locked`), so every close takes one path.

    Call inside the transaction that locked `run` (`lock_run`, or the caller's own row lock)."""
    close_locked([run], reason, **options)


def close_locked(
    runs: list[Run | ClosingRun],
    reason: TerminalReason,
    *,
    summary: str = "",
    usage: dict | None = None,
    actor_client=None,
    actor_user=None,
    frames: list | None = None,
    step_id: str = "",
    withdraw_grants: bool = False,
    stop_reason: str = "",
) -> None:
    """Move locked active runs to the terminal state of `reason` and withdraw their pending approvals.

    Set-based: one UPDATE of the runs, the approvals withdrawn together, one INSERT
    of the events and one chain append of the audit rows, whether one run closes
    (a request) or a thousand (a sweep batch). `runs` are Run instances (with their
    session loaded) or, from a sweep batch, ClosingRun rows: the same attributes are
    read from both. `withdraw_grants` (a reviewer's stop) withdraws approved,
    unconsumed approvals too.
    """
    if not runs:
        return
    for run in runs:
        try:
            run.close(reason)
        except TransitionNotAllowed:
            raise RunStateTransitionError(f"A {run.state} run cannot be closed.") from None
    now = timezone.now()
    changes = {"closed_at": now, "last_activity_at": now}
    if summary:
        changes["summary"] = summary
    if usage:
        changes["usage"] = usage
    for run in runs:
        for name, value in changes.items():
            setattr(run, name, value)
    closing = runs[0]
    Run.objects.filter(pk__any=[run.pk for run in runs]).update(
        state=closing.state, terminal_reason=closing.terminal_reason, **changes
    )
    run_closing.send(
        Run, runs=runs, now=now, include_approved=withdraw_grants, actor_user=actor_user, actor_client=actor_client
    )
    details = {"terminal_reason": closing.terminal_reason, **({"stop_reason": stop_reason} if stop_reason else {})}
    record_events(
        [
            event(
                run,
                "run.closed",
                step_id=step_id,
                frames=frames,
                data={"state": run.state, "terminal": True, **details},
            )
            for run in runs
        ]
    )
    audit.record_all(
        [
            audit.entry(
                audit.Kind.RUN_CLOSE,
                run=run,
                actor_client=actor_client,
                actor_user=actor_user,
                actor_system=audit.closing_actor(run.terminal_reason),
                decision=run.state,
                data=details,
            )
            for run in runs
        ]
    )
    # Last, in its own savepoint: a telemetry failure never fails the close.
    telemetry.record_dispatches(runs)


def suspend_locked(run: Run) -> Write:
    """Park an executing run, inside the transaction that locked it (one already suspended by
    parallel calls stays so).

    Returns the UPDATE that saves it, for the caller to send with its own writes
    (core.rows.run_together) in the same transaction. The suspend TTL counts from
    the park that suspended it: a second card on a parked run does not restart it.
    """
    if run.state != RunState.SUSPENDED:
        run.suspend()
        run.suspended_at = timezone.now()
    return _state_write(run)


def _state_write(run: Run) -> Write:
    """The run's new state, touched now, as an UPDATE for the caller to send with its own writes."""
    _touch(run)
    return Write(
        *update_sql(Run, run.pk, state=run.state, last_activity_at=run.last_activity_at, suspended_at=run.suspended_at)
    )


def resume_locked(run: Run, *, step_id: str = "", along: list | tuple = ()) -> None:
    """Unpark a suspended run, inside the transaction that locked it. `along`: the caller's unsaved
    events (outbox.event), written first, in the same INSERT."""
    run_together(resume_locked_writes(run, step_id=step_id, along=along))


def resume_locked_writes(run: Run, *, step_id: str = "", along: list | tuple = ()) -> list[Write]:
    """`resume_locked` as statements for the caller to send with its own (core.rows.run_together): the
    run's UPDATE, and one INSERT of `along` and then `run.resumed`."""
    run.resume()
    run.suspended_at = None
    return [
        _state_write(run),
        events_write([*along, event(run, "run.resumed", step_id=step_id, data={"state": run.state})]),
    ]


def touch(run_id) -> None:
    """Record activity without a state change (e.g. a gate call), for the idle sweep."""
    Run.objects.filter(pk=run_id).update(last_activity_at=timezone.now())


def touch_write(run: Run) -> Write:
    """`touch` as a statement for the caller to send with its own (core.rows.run_together)."""
    _touch(run)
    return Write(*update_sql(Run, run.pk, last_activity_at=run.last_activity_at))
