"""Per-client request rates for agent runtimes.

Keyed on the API client, not the address: one agent runtime may drive many
patients from one host, and several clients may share a NAT. Reviewers are
people behind a login (and its lockout), so they are not throttled here.

A fixed window per client and scope, counted with one atomic increment in a
cache every web process shares (Redis when REDIS_URL is set), rather than DRF's
sliding window, which stores and rewrites every timestamp of the window on
each request. A window edge may let up to twice the rate through in a burst;
for a flood limit that is fine.

With Redis, the count is one round trip (INCR and EXPIRE, pipelined) on the
throttle cache's own key (`make_key`): Django's `cache.incr` asks whether the
key exists first and builds a client for each call, which cost every agent
request three times as much CPU.
"""

import logging
import time

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.throttling import BaseThrottle

from agents.auth import calling_client
from core.redis_client import shared

logger = logging.getLogger(__name__)

DEFAULT_SCOPE = "default"
# After the cache fails, stop asking it for a while: a hung Redis then costs one short
# timeout per process every few seconds, not one per request.
CACHE_PAUSE_SECONDS = 5.0
cache_paused_until = 0.0


def window_count(key: str, period: int) -> int:
    """This request counted in the window `key` (of `period` seconds): how many the window has had."""
    cache = caches["throttle"]
    if isinstance(cache, RedisCache):
        # The window is in the key: renewing its expiry on each request only keeps it until its window is over.
        stored = cache.make_key(key)
        counted, _ = (
            shared(settings.CACHES["throttle"]["LOCATION"])
            .pipeline(transaction=False)
            .incr(stored)
            .expire(stored, period + 1)
            .execute()
        )
        return counted
    try:
        return cache.incr(key)
    except ValueError:  # the first request of this window
        if cache.add(key, 1, timeout=period + 1):
            return 1
        return cache.incr(key)  # another request of the same window added it first


def _pause_cache() -> None:
    global cache_paused_until
    cache_paused_until = time.monotonic() + CACHE_PAUSE_SECONDS


class ClientRateThrottle(BaseThrottle):
    """`view.throttle_scope` (or "default") at the rate settings.CONDOR_THROTTLE_RATES names for it."""

    def allow_request(self, request, view) -> bool:
        client = calling_client(request)
        if client is None:
            return True
        scope = getattr(view, "throttle_scope", DEFAULT_SCOPE)
        rate = settings.CONDOR_THROTTLE_RATES[scope]
        if rate is None:
            return True
        if time.monotonic() < cache_paused_until:
            return True
        limit, period = rate
        now = time.time()
        window = int(now // period)
        try:
            count = window_count(f"{scope}:{client.pk}:{window}", period)
        except Exception:
            # A throttle must never take the API down with its cache (Redis out): let the request through.
            _pause_cache()
            logger.warning("Throttle cache unavailable; not throttling for %s s", CACHE_PAUSE_SECONDS, exc_info=True)
            return True
        self.seconds_left = (window + 1) * period - now
        return count <= limit

    def wait(self) -> float:
        return self.seconds_left
