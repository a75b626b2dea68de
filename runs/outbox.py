"""Writing outbox events: always inside the caller's transaction, pushed after commit."""

from django.db import transaction

from runs.models import RunEvent
from runs.publish import handoff_seconds, publish


def record_event(run, kind: str, *, step_id: str = "", data: dict | None = None,
                 frames: list | None = None, inbox: dict | None = None) -> RunEvent:
    """Append an event for `run` and schedule its push for after the surrounding commit.

    Must be called inside the transaction that makes the fact true, so the state
    and its event commit (or roll back) together.
    """
    event = RunEvent.objects.create(
        run=run, kind=kind, step_id=step_id, data=data or {}, frames=frames or [], inbox=inbox
    )
    _push_on_commit([event])
    return event


def record_events(run, events: list[dict]) -> list[RunEvent]:
    """record_event for several events of `run` at once (its keyword arguments as dicts, in order): one INSERT."""
    rows = RunEvent.objects.bulk_create([
        RunEvent(run=run, kind=event["kind"], step_id=event.get("step_id", ""), data=event.get("data") or {},
                 frames=event.get("frames") or [], inbox=event.get("inbox"))
        for event in events
    ])
    _push_on_commit(rows)
    return rows


def _push_on_commit(events: list[RunEvent]) -> None:
    # The request waits for its push only briefly (a hung Redis must not add
    # seconds to it); a push still on its way then is left to the drainer.
    transaction.on_commit(lambda: publish(events, wait=handoff_seconds()), robust=True)
