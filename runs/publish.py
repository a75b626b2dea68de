"""Best-effort push of committed outbox events to Channels groups.

Called only after the transaction that wrote the events has committed. A failing
channel layer is logged and counted, never raised: the durable write already
happened, `published_at` stays null, and the drainer re-publishes later. A
request's push is queued for a background thread (`publish_later`, runs/push_queue.py):
the request never waits for Redis.
"""

import asyncio
import logging
import threading
import time
from collections import Counter
from datetime import timedelta
from typing import NamedTuple

import redis
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import connection
from django.utils import timezone
from redis.backoff import NoBackoff
from redis.retry import Retry

from condor.sql import choice_literal, kept
from runs.push_marks import DRAIN_AFTER_SECONDS, PendingMarks, mark_published
from runs.push_queue import PushQueue

logger = logging.getLogger(__name__)

INBOX_GROUP = "inbox"
# In-process counters an operator (or a test) can read: events pushed (their marks written soon after),
# pushes that failed, and pushes not even tried (the publisher stuck, the queue full);
# the last two are left to the drainer.
publish_stats: Counter = Counter()


class Push(NamedTuple):
    """What a push needs of an event; not its frames, which may be large and wait in the queue."""

    pk: int
    run_id: object
    terminal: bool
    inbox: dict | None

    @classmethod
    def of(cls, event) -> "Push":
        return cls(event.pk, event.run_id, bool(event.data.get("terminal")), event.inbox)


def run_group(run_id) -> str:
    return f"run.{run_id}"


def run_message(push: Push) -> dict:
    # A wake-up, not the content: the stream re-reads the outbox from its last
    # position, so the frames (possibly large args) need not travel through Redis.
    return {"type": "run.event", "event_id": push.pk, "terminal": push.terminal}


def inbox_message(push: Push) -> dict:
    return {"type": "inbox.message", "event_id": push.pk, "message": push.inbox}


def _stale_cards(pushes: list[Push]) -> set[int]:
    """Ids of the events whose card.added would show a card that is no longer pending.

    The drainer re-publishes an add long after the fact (Redis was down, and a
    reviewer decided from a fresh snapshot meanwhile), and a decision's push from
    another process can overtake an add; either way a decided card must not come
    back to the inbox. Checked once per batch here, not once per socket in the consumer.
    """
    from approvals.models import Approval, ApprovalStatus

    added = {push.pk: push.inbox["card"]["id"] for push in pushes
             if push.inbox is not None and push.inbox.get("type") == "card.added"}
    if not added:
        return set()
    now = timezone.now()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(kept("stale-cards", _pending_cards_sql, model=Approval), [list(set(added.values()))])
            pending = {str(pk) for pk, expires_at in cursor.fetchall() if expires_at > now}
    else:
        pending = {str(pk) for pk in Approval.objects.filter(
            pk__in=added.values(), status=ApprovalStatus.PENDING, expires_at__gt=now,
        ).values_list("pk", flat=True)}
    return {event_pk for event_pk, approval_id in added.items() if approval_id not in pending}


def _pending_cards_sql(db) -> str:
    # The ids as a set joined to the table, as in the published mark (runs/push_marks.py), and the expiry
    # compared here rather than in the WHERE: either way PostgreSQL plans it once, by primary key.
    from approvals.models import Approval, ApprovalStatus

    def column(name):
        return db.ops.quote_name(Approval._meta.get_field(name).column)

    return (f"SELECT {column('id')}, {column('expires_at')} FROM {db.ops.quote_name(Approval._meta.db_table)} "
            f"WHERE {column('id')} IN (SELECT unnest(%s::uuid[])) "
            f"AND {column('status')} = {choice_literal(ApprovalStatus.PENDING)}")


# Which of these groups has a member that has not expired (channels_redis's own
# group_send drops members older than group_expiry): one script a Redis connection,
# read only, however many groups. KEYS are group keys, ARGV[1] the expiry cut-off.
_LISTENED_GROUPS_LUA = """
local listened = {}
for i = 1, #KEYS do
    if redis.call('ZCOUNT', KEYS[i], '(' .. ARGV[1], '+inf') > 0 then listened[#listened + 1] = i end
end
return listened
"""


def _listened_groups(layer, groups: list[str]) -> set[str]:
    """The members of `groups` someone listens to, asked of Redis in one round trip per shard.

    Asked from the calling thread, through a plain Redis client: most rounds find nobody
    listening and so need nothing else of Redis, and a hop to the publisher loop and back
    (two threads handing the GIL to each other) cost more than the question itself.
    """
    by_shard: dict[int, list[str]] = {}
    for group in groups:
        by_shard.setdefault(layer.consistent_hash(group), []).append(group)
    cutoff = int(time.time()) - layer.group_expiry
    listened = set()
    for index, members in by_shard.items():
        script = _listened_script(layer.hosts[index])
        found = script(keys=[layer._group_key(group) for group in members], args=[cutoff])
        listened.update(members[position - 1] for position in found)
    return listened


_scripts: dict[tuple, object] = {}
_scripts_lock = threading.Lock()


def _listened_script(host: dict):
    """The listened-groups script on a client of `host` (a channels_redis host: its address and options)."""
    key = tuple(sorted((name, str(value)) for name, value in host.items()))
    script = _scripts.get(key)
    if script is None:
        options = {name: value for name, value in host.items() if name != "address"}
        # Never longer than a push may take (the async path's own bound).
        options["socket_timeout"] = min(options.get("socket_timeout") or PUBLISH_TIMEOUT_SECONDS,
                                        PUBLISH_TIMEOUT_SECONDS)
        options.setdefault("socket_connect_timeout", options["socket_timeout"])
        # No retries: a failed question fails the round at once, and the drainer sends it later
        # (redis-py's own retries back off for seconds, holding the push thread).
        options.setdefault("retry", Retry(NoBackoff(), 0))
        client = redis.Redis(connection_pool=redis.ConnectionPool.from_url(host["address"], **options))
        with _scripts_lock:
            script = _scripts.setdefault(key, client.register_script(_LISTENED_GROUPS_LUA))
    return script


def _knows_listeners(layer) -> bool:
    # channels_redis's RedisChannelLayer on plain hosts (the deployed layer); any other layer gets every push.
    return (all(hasattr(layer, name) for name in ("consistent_hash", "group_expiry", "_group_key", "hosts"))
            and all("address" in host and "sentinels" not in host for host in layer.hosts))


def _groups(pushes: list[Push]) -> set[str]:
    groups = {run_group(push.run_id) for push in pushes}
    if any(push.inbox is not None for push in pushes):
        groups.add(INBOX_GROUP)
    return groups


async def _send(layer, pushes: list[Push], stale: set[int], sent: list[int], done: list[int],
                listened: set[str]) -> None:
    """Push each event to the groups of `listened` it is for, filling `sent` (ids that went out) and
    `done` (ids tried) as it goes: so a batch cut short by its timeout still marks what went out."""
    for push in pushes:
        try:
            group = run_group(push.run_id)
            if group in listened:
                await layer.group_send(group, run_message(push))
            if push.inbox is not None and push.pk not in stale and INBOX_GROUP in listened:
                await layer.group_send(INBOX_GROUP, inbox_message(push))
        except Exception:  # the layer is a side channel: log, count, move on
            publish_stats["failed"] += 1
            logger.warning("could not publish run event %s; the drainer will retry", push.pk, exc_info=True)
        else:
            sent.append(push.pk)
        done.append(push.pk)


# A push that has not gone out by then is abandoned and left to the drainer: a
# hung Redis must not hold the push thread (nor a sweep) for longer.
PUBLISH_TIMEOUT_SECONDS = 3.0
# Pushes on their way at once; past this the publisher is clearly stuck (Redis
# hung) and a new push is not even attempted: the drainer sends it later.
MAX_IN_FLIGHT = 64


class _PublisherLoop:
    """One long-lived event loop on a daemon thread for pushes from sync code.

    async_to_sync outside an ASGI server (gunicorn, Celery, management commands)
    would build a fresh event loop per call, and channels_redis a fresh Redis
    connection with it; this loop keeps one connection pool warm instead.
    """

    def __init__(self):
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._in_flight = 0

    def _ensure(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="condor-publisher", daemon=True).start()
            self._loop = loop
        return self._loop

    def submit(self, coroutine):
        """Start `coroutine` on the loop; None (and the coroutine closed) when too many are in flight."""
        with self._lock:
            if self._in_flight >= MAX_IN_FLIGHT:
                coroutine.close()
                return None
            self._in_flight += 1
            loop = self._ensure()
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coroutine, PUBLISH_TIMEOUT_SECONDS), loop)
        future.add_done_callback(self._done)
        return future

    def _done(self, future) -> None:
        with self._lock:
            self._in_flight -= 1


_publisher = _PublisherLoop()


def _push(layer, pushes: list[Push], mark=None) -> int:
    """Push `pushes` through `layer` and mark the ones that went out, waiting for it all. Returns the count.

    `mark`: what takes the ids that went out; by default `mark_published`, at once.
    """
    sent: list[int] = []
    done: list[int] = []
    try:
        # A message goes only to a group someone listens to, asked of Redis once for the whole
        # batch: nearly always nobody streams the run, and group_send would take two round trips
        # to find its group empty (the inbox's, too, while no reviewer has it open). A stream joins
        # its group before it replays the outbox (runs/stream.py), and an inbox socket before it
        # reads its snapshot (approvals/consumers.py), so one that joins after this question
        # still reads the event, which was committed before any push.
        listened = _groups(pushes)  # every group: a layer that cannot say who listens
        if _knows_listeners(layer):
            listened = _listened_groups(layer, sorted(listened))
        # Cards go only to an inbox someone has open, so only then are they checked for staleness
        # (a read of the approvals: the most work in a round of parked calls' pushes).
        stale = _stale_cards(pushes) if INBOX_GROUP in listened else set()
        # The in-memory layer's queues belong to the server's own loop, so it must be
        # reached through async_to_sync; there is no network to hang on.
        if isinstance(layer, InMemoryChannelLayer):
            async_to_sync(_send)(layer, pushes, stale, sent, done, listened)
        elif not listened:  # nobody to tell: every event has had its push
            sent = done = [push.pk for push in pushes]
        else:
            future = _publisher.submit(_send(layer, pushes, stale, sent, done, listened))
            if future is None:
                publish_stats["skipped"] += len(pushes)
                return 0
            # The loop ends the push at PUBLISH_TIMEOUT_SECONDS; the margin only lets its answer arrive.
            future.result(PUBLISH_TIMEOUT_SECONDS + 1)
    except Exception:
        publish_stats["failed"] += len(pushes) - len(done)
        logger.warning("channel layer unavailable; %d events left for the drainer", len(pushes) - len(done),
                       exc_info=True)
    sent = list(sent)  # a copy: a push cut short above may still be finishing on the loop
    if sent:
        (mark or mark_published)(sent)
        publish_stats["published"] += len(sent)
    return len(sent)


def publish(events) -> int:
    """Push `events` (committed RunEvent rows) and mark the ones that went out, waiting for it. Returns the count.

    The drainer's and a sweep's form, and a test's; a request's push is `publish_later`.
    """
    events = list(events)
    layer = get_channel_layer()
    if not events or layer is None:
        return 0
    return _push(layer, [Push.of(event) for event in events])


def _push_round(items: list[tuple]) -> None:
    """The push thread's round: every queued (layer, pushes), each layer's in one push; the marks wait (_settle)."""
    by_layer: list[tuple] = []
    for layer, pushes in items:
        if by_layer and by_layer[-1][0] is layer:
            by_layer[-1][1].extend(pushes)
        else:
            by_layer.append((layer, list(pushes)))
    for layer, pushes in by_layer:
        _push(layer, pushes, mark=_marks.add)


_marks = PendingMarks()


def _settle(*, forced: bool, idle: bool) -> float | None:
    """After the push thread's rounds: write the marks once due (runs/push_marks.py); seconds until they are."""
    try:
        due_in = _marks.due_in()
        if due_in is not None and (forced or due_in <= 0):
            due_in = None
            # Taken before the write: a mark that fails is not retried; its events go to the drainer.
            mark_published(_marks.take())
    finally:
        if idle:
            # The push thread's own connection goes back to the pool whenever the queue runs dry:
            # held between rounds, it would take a pool slot for nothing (and keep a test database open).
            connection.close()
    return due_in


_queue = PushQueue(_push_round, settle=_settle, name="condor-push")


def publish_later(events) -> None:
    """A request's push: queued for the push thread, so the request never waits for Redis.

    Called from the on_commit hook. A full queue leaves the events to the drainer.
    """
    layer = get_channel_layer()
    if not events or layer is None:
        return
    pushes = [Push.of(event) for event in events]
    # The in-memory layer is reached on the caller's loop (see _push) and has no network
    # to wait on. And a hook run while this connection is still inside a transaction
    # (a test's wrapping one, under django_capture_on_commit_callbacks) wrote rows no
    # other connection sees yet: the thread's stale-card check and mark would miss them.
    if isinstance(layer, InMemoryChannelLayer) or connection.in_atomic_block:
        _push(layer, pushes)
    elif not _queue.put((layer, pushes), len(pushes)):
        publish_stats["skipped"] += len(pushes)
        logger.warning("push queue full; %d events left for the drainer", len(pushes))


def flush(timeout: float | None = None) -> bool:
    """Wait until every push queued so far is done and marked; False when `timeout` ran out first (tests, process exit)."""
    return _queue.flush(timeout)


def send_to_group(group: str, message: dict) -> None:
    """Best-effort push of one message that no outbox row backs (a socket told to re-check); never waits."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        if isinstance(layer, InMemoryChannelLayer):
            async_to_sync(layer.group_send)(group, message)
        elif _publisher.submit(layer.group_send(group, message)) is None:
            publish_stats["skipped"] += 1
    except Exception:
        logger.warning("could not push to %s", group, exc_info=True)


def drain(limit: int = 500) -> int:
    """Re-publish committed events that were never marked published (the outbox drainer).

    Oldest first, so a reconnecting consumer sees facts in the order they happened.
    Returns how many went out; the rest stay for the next pass. Events younger than
    DRAIN_AFTER_SECONDS are left alone: their push, or its mark, may still be on its way.
    """
    from runs.models import RunEvent

    settled = timezone.now() - timedelta(seconds=DRAIN_AFTER_SECONDS)
    pending = list(RunEvent.objects.filter(published_at__isnull=True, created_at__lt=settled).order_by("id")[:limit])
    return publish(pending)
