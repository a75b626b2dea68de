"""A test run's keys in the shared Redis, found and removed by its prefix only.

Every run writes under its own prefix (tests/conftest.py): channel layer groups and
channels (`<prefix>:group:…`, `<prefix>specific.…`), the Celery broker's queues and
kombu's `_kombu.binding.*` sets (`<prefix>:…`), throttle counters (`<prefix>-throttle:…`),
checked API keys (`<prefix>-api_keys:…`).
Several runs share one Redis database, so a run never FLUSHDBs: it removes what
carries its own prefix and nothing else.
"""

import redis

_BATCH = 500


def own_key(key: str, prefix: str) -> bool:
    """Whether `key` is under `prefix` itself, not under a longer prefix that starts the same way
    (run 123's prefix must not take run 1234's keys: the run prefix ends with its pid's digits)."""
    return key.startswith(prefix) and not key[len(prefix) : len(prefix) + 1].isdigit()


def forget_run_keys(url: str, prefix: str) -> int:
    """Delete every key of the run whose prefix is `prefix` in the Redis at `url`; how many went."""
    client = redis.Redis.from_url(url)
    try:
        removed = 0
        batch = []
        # SCAN, not KEYS: other runs keep working on this Redis meanwhile.
        for raw in client.scan_iter(match=f"{prefix}*", count=_BATCH):
            if own_key(raw.decode(errors="replace"), prefix):
                batch.append(raw)
            if len(batch) >= _BATCH:
                removed += client.unlink(*batch)
                batch = []
        if batch:
            removed += client.unlink(*batch)
        return removed
    finally:
        client.close()
