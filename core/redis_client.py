"""One redis-py client a process for each Redis URL, for the few places that ask Redis directly.

redis-py's client and its connection pool are thread-safe and start afresh in a forked
child, so one a process serves every request thread. Short timeouts and no retry: each
caller has an answer for a Redis that cannot answer (a push is tried anyway, a throttle
lets the request through), and a hung Redis must cost a request little.
"""

from functools import cache

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

TIMEOUTS = {"socket_timeout": 0.25, "socket_connect_timeout": 0.25}


@cache
def shared(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0), **TIMEOUTS)
