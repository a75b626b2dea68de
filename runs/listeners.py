"""Which push groups someone may be listening to, so a push skips the groups nobody joined.

Channels has no public way to ask whether a group has members, and a `group_send` to an
empty group still costs channels_redis two Redis round trips: for most pushes (a gate
call on a run nobody streams) that was a large share of the request's work. So each listener
says where it listens: before it reads what it will show (the stream's replay, the
inbox's snapshot), it joins its group and marks it in Redis for LISTENING_SECONDS, and
renews the mark while it stays (`Listening`). A push asks after its commit (`listened`),
one MGET for all its groups. Either the mark was there and the push goes out (and
reaches the listener, or went out before it joined and so before its read), or the
listener marked the group later, so it read what it shows after the commit and shows
the event without the push.

A mark outlives its last listener by up to LISTENING_SECONDS; a push then goes to an
empty group, which costs that group_send and nothing else. A Redis that cannot answer
the question counts every group as listened: the push is tried, as it would be without
the marks. Without REDIS_URL there is one process and the in-memory channel layer,
whose group_send costs too little to skip: every group counts as listened.
"""

import logging
import time

import redis
import redis.asyncio
from django.conf import settings
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff

from core.redis_client import TIMEOUTS, shared

logger = logging.getLogger(__name__)

LISTENING_SECONDS = 300
# Renewed this often by a listener that stays, so a renewal that fails now and then loses nothing.
RENEW_EVERY_SECONDS = 60


def group_key(group: str) -> str:
    """The Redis key that says someone listens to `group` (set while a socket is open, with a TTL)."""
    return f"{settings.REDIS_PREFIX}:listening:{group}"


def listened(groups) -> set[str]:
    """The members of `groups` that someone may listen to (every one, when Redis cannot say)."""
    groups = sorted(set(groups))
    if not groups or not settings.REDIS_URL:
        return set(groups)
    try:
        marks = shared(settings.REDIS_URL).mget([group_key(group) for group in groups])
    except redis.RedisError:
        logger.warning("could not ask Redis who listens; pushing to every group", exc_info=True)
        return set(groups)
    return {group for group, mark in zip(groups, marks, strict=True) if mark is not None}


class Listening:
    """A listener's mark on its group: `await mark()` once joined (raises when Redis cannot take it:
    the listener then cannot count on pushes), `await renew()` now and then while it stays."""

    def __init__(self, group: str):
        self.group = group
        self.marked_at: float | None = None

    async def mark(self) -> None:
        if settings.REDIS_URL:
            # A client of its own: a mark is rare (a join, then every RENEW_EVERY_SECONDS), and an
            # asyncio client belongs to the loop it was made on.
            client = redis.asyncio.Redis.from_url(settings.REDIS_URL, retry=AsyncRetry(NoBackoff(), 0), **TIMEOUTS)
            try:
                await client.set(group_key(self.group), 1, ex=LISTENING_SECONDS)
            finally:
                await client.aclose()
        self.marked_at = time.monotonic()

    async def renew(self) -> None:
        if self.marked_at is not None and time.monotonic() - self.marked_at < RENEW_EVERY_SECONDS:
            return
        try:
            await self.mark()
        except Exception:  # the mark holds LISTENING_SECONDS, several renewals' worth: the next one may land
            logger.warning("could not renew the mark on %s", self.group, exc_info=True)
