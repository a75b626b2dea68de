"""The push thread's published marks, gathered and written a batch at a time (issue 11).

A mark only tells the drainer that an event's push went out: without it, the drainer
sends the event again, to a consumer that drops it by event id. So the push thread
need not write it the moment its push is done. Written after every round, it was a
database checkout, a health check and an UPDATE for each request, run on the request's
process while the next request worked: most of what a push cost. Gathered here, one
UPDATE covers every round of up to MARK_AFTER_SECONDS, or MARK_BATCH events.

Marks still waiting when a process dies are lost with it; their events are pushed once
more by the drainer, which leaves alone events younger than DRAIN_AFTER_SECONDS (a mark
for them may still be on its way).
"""

import os
import threading
import time

from django.db import connection
from django.utils import timezone

# How long a mark may wait for others to join it, at most.
MARK_AFTER_SECONDS = 0.5
# Events a mark covers at most: past it the batch is written at once.
MARK_BATCH = 1000
# The drainer's margin: well past MARK_AFTER_SECONDS, plus a push's own time.
DRAIN_AFTER_SECONDS = 10.0


class PendingMarks:
    """Event ids whose pushes went out and whose marks are not written yet."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._reset()
        # A forked child starts with none: the parent marks its own (and the lock may be held).
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._ids: list[int] = []
        self._since: float | None = None  # when the oldest id waiting came

    def add(self, event_ids) -> None:
        with self._lock:
            if not self._ids:
                self._since = self._clock()
            self._ids.extend(event_ids)

    def due_in(self) -> float | None:
        """Seconds until the marks waiting are due (0 or less: now), or None when none wait."""
        with self._lock:
            if not self._ids:
                return None
            if len(self._ids) >= MARK_BATCH:
                return 0.0
            return self._since + MARK_AFTER_SECONDS - self._clock()

    def take(self) -> list[int]:
        """Every id waiting, handed over once."""
        with self._lock:
            ids, self._ids, self._since = self._ids, [], None
        return ids


# The mark's own commit need not wait for its WAL flush (PostgreSQL's synchronous_commit
# off, for this one statement's transaction): a mark lost in a server crash only makes
# the drainer push that event once more, and consumers drop a repeat by event id. The
# events themselves were committed durably before any push. With the flush, the mark
# cost a request a second disk sync after its own COMMIT (bench/README.md, "Hot paths").
# The ids come as a set joined to the table (`IN (SELECT unnest(…))`): with `= ANY(…)`, a
# plan for the array at hand always looked cheaper than one for any array, so PostgreSQL
# planned every mark afresh; as a set, the two cost about the same and it plans it once.
_MARK_SQL = (
    "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)) "
    'UPDATE "runs_runevent" SET "published_at" = %s FROM relaxed '
    'WHERE "runs_runevent"."id" IN (SELECT unnest(%s::bigint[])) AND "runs_runevent"."published_at" IS NULL'
)


def mark_published(event_ids: list[int]) -> None:
    """Record that these events' pushes went out, so the drainer leaves them alone."""
    from runs.models import RunEvent

    # Only a statement in autocommit is its own transaction: inside someone's atomic
    # block, set_config would relax the commit of everything that block wrote.
    if connection.vendor == "postgresql" and connection.get_autocommit():
        with connection.cursor() as cursor:
            cursor.execute(_MARK_SQL, [timezone.now(), list(event_ids)])
    else:
        RunEvent.objects.filter(pk__in=event_ids, published_at__isnull=True).update(published_at=timezone.now())
