"""The one push path: committed outbox events, sent to their Channels groups.

A state change commits its row and its outbox event together (runs/outbox.py). The
commit's `on_commit` hook then hands the events to `publish`, in the thread that
committed them; the drainer hands it, the same way, every event whose published mark
is still missing DRAIN_AFTER_SECONDS later (its push failed, timed out, or died with
its process, or nobody listened). `publish` sends each event with the channel layer's
`group_send` to those of its groups someone listens to (runs/listeners.py), and marks
the ones that went out.

It never raises into its caller: the durable write already happened. A push that
fails, or outlasts CONDOR_PUSH_TIMEOUT_MS, is logged and counted, and its events keep
`published_at` null for the drainer. An event pushed twice is harmless: the run
stream re-reads the outbox after its last frame, and the inbox socket drops a
repeated event id.
"""

import asyncio
import logging
import threading
from collections import Counter
from datetime import timedelta
from functools import cache

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.db import connection
from django.utils import timezone

from runs import listeners
from runs.models import RunEvent
from runs.signals import stale_news

logger = logging.getLogger(__name__)

INBOX_GROUP = "inbox"
# The drainer leaves younger events alone: their push, and its mark, may still be on their way.
DRAIN_AFTER_SECONDS = 10.0
# Events pushed, and events whose push failed (left to the drainer), since the process started.
publish_stats: Counter = Counter()


def run_group(run_id) -> str:
    return f"run.{run_id}"


def run_message(event) -> dict:
    # A wake-up, not the content: the stream re-reads the outbox from its last
    # position, so the frames (possibly large args) need not travel through Redis.
    return {"type": "run.event", "event_id": event.pk, "terminal": bool(event.data.get("terminal"))}


def inbox_message(event) -> dict:
    return {"type": "inbox.message", "event_id": event.pk, "message": event.inbox}


def publish(events) -> int:
    """Push committed `events` to the groups someone listens to, and mark the ones that are done; how many.

    Called after the commit that wrote them (runs/outbox.py) and by the drainer. Waits
    for the push, at most CONDOR_PUSH_TIMEOUT_MS; never raises. An event is done once
    its push went out, or, when nobody listens to any of its groups, once it is the
    drainer's (older than DRAIN_AFTER_SECONDS). Such an event needs no push at all: a
    listener that joins later reads it from the outbox. Only its mark is missing, and
    marked right after its commit it would cost most requests a statement of their own;
    the drainer marks those in bulk.
    """
    events = list(events)
    layer = get_channel_layer()
    if not events or layer is None:
        return 0
    late = timezone.now() - timedelta(seconds=DRAIN_AFTER_SECONDS)
    heard, unheard_and_late, sent = [], [], []
    try:
        listened = listeners.listened(group for event in events for group in _groups(event))
        for event in events:
            if listened.intersection(_groups(event)):
                heard.append(event)
            elif event.created_at <= late:
                unheard_and_late.append(event.pk)
        # Cards go out only to an open inbox, so only then are they checked for staleness.
        stale = stale_events(heard, late) if INBOX_GROUP in listened else set()
        if heard:
            _run(_send_events, layer, heard, listened, stale, sent)
    except Exception:  # the layer is a side channel: what did not go out is the drainer's
        publish_stats["failed"] += len(heard) - len(sent)
        logger.warning(
            "could not push %d of %d run events; the drainer will retry",
            len(heard) - len(sent),
            len(heard),
            exc_info=True,
        )
    publish_stats["published"] += len(sent)
    done = sorted(unheard_and_late + sent)
    if done:
        try:
            mark_published(done)
        except Exception:  # unmarked, they only go out once more
            logger.warning("could not mark %d run events; the drainer will push them again", len(done), exc_info=True)
    return len(done)


def _groups(event) -> tuple[str, ...]:
    return (run_group(event.run_id), INBOX_GROUP) if event.inbox is not None else (run_group(event.run_id),)


async def _send_events(layer, events: list, listened: set[str], stale: set[int], sent: list[int]) -> None:
    """Each event to those of its groups someone listens to, in order; `sent` takes the ids that went out."""
    async with asyncio.timeout(settings.CONDOR_PUSH_TIMEOUT_MS / 1000):
        for event in events:
            group = run_group(event.run_id)
            if group in listened:
                await layer.group_send(group, run_message(event))
            if event.inbox is not None and INBOX_GROUP in listened and event.pk not in stale:
                await layer.group_send(INBOX_GROUP, inbox_message(event))
            sent.append(event.pk)


def send_to_group(group: str, message: dict) -> None:
    """Push one message that no outbox row backs (a socket told to re-check): best effort, never raises."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        _run(_send_one, layer, group, message)
    except Exception:
        logger.warning("could not push to %s", group, exc_info=True)


async def _send_one(layer, group: str, message: dict) -> None:
    async with asyncio.timeout(settings.CONDOR_PUSH_TIMEOUT_MS / 1000):
        await layer.group_send(group, message)


def stale_events(events: list, late) -> set[int]:
    """Pks of the `events` whose news went stale since their commit, as the apps above say
    (runs.signals.stale_news): the drainer leaves them out."""
    stale: set[int] = set()
    for _receiver, pks in stale_news.send(RunEvent, events=events, late=late):
        stale |= pks
    return stale


# Each thread's own event loop, for a process whose pushes come from long-lived threads.
thread_loops = threading.local()
_loop_per_thread = False


def keep_a_loop_per_thread() -> None:
    """Run this process's pushes on one event loop per thread, kept between pushes (asyncio.Runner).

    For a WSGI server's request threads (gunicorn gthread: condor/wsgi.py), which live as
    long as the process. There `async_to_sync` finds no event loop, so each call would build
    one, a thread to run it in and, in channels_redis, a new Redis connection for that loop:
    several times what the push itself costs (bench/README.md, "One push path"). A kept loop
    keeps its connection. Not for an ASGI server: its sync views run in short-lived threads,
    and `async_to_sync` hands their pushes to the server's own loop and its connections.
    """
    global _loop_per_thread
    _loop_per_thread = True


def _run(coroutine_function, layer, *args) -> None:
    # The in-memory layer's queues belong to the loop of the server that holds the sockets:
    # only async_to_sync reaches that loop (and that layer has no connection to keep).
    if not _loop_per_thread or isinstance(layer, InMemoryChannelLayer):
        async_to_sync(coroutine_function)(layer, *args)
        return
    runner = getattr(thread_loops, "runner", None)
    if runner is None:
        runner = thread_loops.runner = asyncio.Runner()
    runner.run(coroutine_function(layer, *args))


def mark_published(event_ids: list[int]) -> None:
    """Record that these events are settled (pushed, or nobody listened), so the drainer leaves them alone."""
    # Only a statement in autocommit is its own transaction: inside someone's atomic
    # block, relaxing the commit would relax everything that block wrote.
    if connection.vendor == "postgresql" and connection.get_autocommit():
        with connection.cursor() as cursor:
            cursor.execute(_relaxed_mark_sql(), [timezone.now(), list(event_ids)])
    else:
        RunEvent.objects.filter(pk__in=event_ids, published_at__isnull=True).update(published_at=timezone.now())


@cache
def _relaxed_mark_sql() -> str:
    """The mark as one statement whose own commit does not wait for its WAL flush.

    A mark lost in a server crash only makes the drainer push that event once more; the
    events themselves were committed durably before any push. With the flush, every
    request would wait for a second disk sync after its own COMMIT. The ids come as a set
    joined to the table (`IN (SELECT unnest(…))`): with `= ANY(…)`, a plan for the array
    at hand always looked cheaper than a generic one, and PostgreSQL planned every mark afresh.
    """
    quote = connection.ops.quote_name
    table = quote(RunEvent._meta.db_table)
    pk = f"{table}.{quote(RunEvent._meta.pk.column)}"
    published = quote(RunEvent._meta.get_field("published_at").column)
    return (
        f"WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)) "
        f"UPDATE {table} SET {published} = %s FROM relaxed "
        f"WHERE {pk} IN (SELECT unnest(%s::bigint[])) AND {table}.{published} IS NULL"
    )


def drain(limit: int = 500) -> int:
    """The outbox drainer: up to `limit` events left unmarked, oldest first; how many are done now.

    Those whose push failed or died with its process go out again (oldest first, so a
    reconnecting consumer sees facts in the order they happened); those nobody listens
    to are only marked. The rest stay for the next call.
    """
    settled = timezone.now() - timedelta(seconds=DRAIN_AFTER_SECONDS)
    pending = RunEvent.objects.filter(published_at__isnull=True, created_at__lt=settled).order_by("id")
    return publish(pending.defer("frames")[:limit])  # a push never carries the frames
