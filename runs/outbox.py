"""Writing outbox events: always inside the caller's transaction, pushed after its commit (runs/publish.py)."""

from django.db import connection, transaction

from core.rows import Write, insert_rows_sql, instance
from runs.models import RunEvent
from runs.publish import publish


def record_event(
    run,
    kind: str,
    *,
    step_id: str = "",
    data: dict | None = None,
    frames: list | None = None,
    inbox: dict | None = None,
) -> RunEvent:
    """Append an event for `run` and schedule its push for after the surrounding commit.

    Must be called inside the transaction that makes the fact true, so the state
    and its event commit (or roll back) together. One event of `record_events`.
    """
    (recorded,) = record_events([event(run, kind, step_id=step_id, data=data, frames=frames, inbox=inbox)])
    return recorded


def event_write(
    run,
    kind: str,
    *,
    step_id: str = "",
    data: dict | None = None,
    frames: list | None = None,
    inbox: dict | None = None,
) -> Write:
    """`record_event` as a statement to fold into another (core.rows.run_together): same row, same push."""
    return events_write([event(run, kind, step_id=step_id, data=data, frames=frames, inbox=inbox)])


def events_write(rows: list[RunEvent]) -> Write:
    """`record_events` as one statement to fold into another (core.rows.run_together): one INSERT of
    them all, so their ids follow the list's order (two INSERTs in one statement would not say which
    runs first), and one push after the commit."""
    sql, params = insert_rows_sql(rows)

    def saved(ids: list) -> None:
        for row, pk in zip(rows, sorted(ids), strict=True):
            row.pk = pk
            row._state.adding, row._state.db = False, connection.alias
        _push_on_commit(rows)

    return Write(sql, params, done=saved)


def _push_on_commit(events: list[RunEvent]) -> None:
    # In the committing thread, waited for (at most CONDOR_PUSH_TIMEOUT_MS): a sweep's
    # pushes cannot pile up behind its batches, nor a busy process's behind its requests.
    transaction.on_commit(lambda: publish(events), robust=True)


def event(
    run,
    kind: str,
    *,
    step_id: str = "",
    data: dict | None = None,
    frames: list | None = None,
    inbox: dict | None = None,
) -> RunEvent:
    """An event for `record_events`, not yet saved. `run`: a Run, or anything with its `pk` (runs/closing.py)."""
    return instance(
        RunEvent, run_id=run.pk, kind=kind, step_id=step_id, data=data or {}, frames=frames or [], inbox=inbox
    )


def record_events(events: list[RunEvent]) -> list[RunEvent]:
    """`record_event` for many at once: one INSERT, one push of them all after the commit."""
    if events:
        RunEvent.objects.bulk_create(events)  # its ids come back with it: the pushes name the events by id
        _push_on_commit(events)
    return events
