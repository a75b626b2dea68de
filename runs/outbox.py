"""Writing outbox events: always inside the caller's transaction, pushed after commit."""

from django.db import connection, transaction

from condor.sql import Write, insert_sql
from runs.models import RunEvent
from runs.publish import handoff_seconds, publish


def record_event(run, kind: str, *, step_id: str = "", data: dict | None = None,
                 frames: list | None = None, inbox: dict | None = None) -> RunEvent:
    """Append an event for `run` and schedule its push for after the surrounding commit.

    Must be called inside the transaction that makes the fact true, so the state
    and its event commit (or roll back) together. One event of `record_events`.
    """
    (recorded,) = record_events([event(run, kind, step_id=step_id, data=data, frames=frames, inbox=inbox)])
    return recorded


def event_write(run, kind: str, *, step_id: str = "", data: dict | None = None,
                frames: list | None = None, inbox: dict | None = None) -> Write:
    """`record_event` as a statement to fold into another (condor.sql.run_together): same row, same push."""
    row = event(run, kind, step_id=step_id, data=data, frames=frames, inbox=inbox)
    sql, params = insert_sql(row)

    def saved(ids: list) -> None:
        row.pk = ids[0]
        row._state.adding, row._state.db = False, connection.alias
        _push_on_commit([row])

    return Write(sql, params, done=saved)


def _push_on_commit(events: list[RunEvent]) -> None:
    # The request waits for its push only briefly (a hung Redis must not add
    # seconds to it); a push still on its way then is left to the drainer.
    transaction.on_commit(lambda: publish(events, wait=handoff_seconds()), robust=True)


def event(run, kind: str, *, step_id: str = "", data: dict | None = None,
          frames: list | None = None, inbox: dict | None = None) -> RunEvent:
    """An event for `record_events`, not yet saved."""
    return RunEvent(run=run, kind=kind, step_id=step_id, data=data or {}, frames=frames or [], inbox=inbox)


def record_events(events: list[RunEvent]) -> list[RunEvent]:
    """`record_event` for many at once: one INSERT, one push of them all after the commit."""
    if events:
        RunEvent.objects.bulk_create(events)
        _push_on_commit(events)
    return events
