"""Run by tests/test_redis_cleanup.py as a pytest run of its own (never collected with the suite):
it writes under its run's prefix what a run leaves in Redis, and reports what it wrote."""

import json
import os
from pathlib import Path

import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache import caches


def test_probe_writes_keys_as_a_run_does():
    """A kombu binding, a channel layer group and a throttle count, under this run's prefix."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        client.sadd(f"{settings.REDIS_PREFIX}:_kombu.binding.celery", "celery\x06\x16\x06\x16celery")
        layer = get_channel_layer()
        async_to_sync(layer.group_add)("inbox", async_to_sync(layer.new_channel)())
        caches["throttle"].set("probe", 1, 300)
        Path(os.environ["CONDOR_REDIS_PROBE_REPORT"]).write_text(
            json.dumps(
                {
                    "prefix": settings.REDIS_PREFIX,
                    "written": [key.decode() for key in client.scan_iter(match=f"{settings.REDIS_PREFIX}*")],
                }
            )
        )
    finally:
        client.close()
