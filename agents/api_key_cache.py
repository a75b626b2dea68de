"""API keys looked up once a window through Django's cache framework, not on every request.

An agent sends its key with every call, and the key's check is a SELECT and a hash. The
answer (the key's client and expiry) is kept in the "api_keys" cache (settings.CACHES:
Redis, shared by every web process, when REDIS_URL is set; this process's memory
otherwise) for CONDOR_API_KEY_CACHE_SECONDS, under the key's hash as
djangorestframework-api-key stores it, never the key itself.

A key saved or deleted through the ORM or the admin (its client too) is struck from the
cache when that transaction commits, for every process that shares the cache. A key
revoked by a bulk `.update()` or outside Django stops within the window. Only valid keys
are kept: an unknown or revoked key is looked up each time, and a new key works at once.
0 turns the cache off.
"""

import logging
import time

from django.conf import settings
from django.core.cache import caches
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from agents.models import ApiClient, ApiClientKey

logger = logging.getLogger(__name__)

CACHE = "api_keys"
# What a commit leaves where a changed key's answer was. A lookup that read the key before
# that commit stores its answer with `add`, which a strike refuses, so it cannot keep the
# old answer for a whole window.
STRUCK = "struck"
# After the cache fails, the keys are checked in the database alone for a while: a hung
# Redis then costs one short timeout per process every few seconds, not one per request.
CACHE_PAUSE_SECONDS = 5.0
paused_until = 0.0


def key_hash(raw_key: str) -> str:
    """The hash djangorestframework-api-key stores for `raw_key` (ApiClientKey.hashed_key)."""
    return ApiClientKey.objects.key_generator.hash(raw_key)


def cached_client(raw_key: str, lookup):
    """The ApiClient of `raw_key` (None if it is not a valid key), `lookup(raw_key) -> (client, expiry)` on a miss."""
    seconds = settings.CONDOR_API_KEY_CACHE_SECONDS
    if seconds <= 0:
        return lookup(raw_key)[0]
    name = key_hash(raw_key)
    entry = _cache_call("get", name)
    if isinstance(entry, tuple):
        client, expiry = entry
        if expiry is None or expiry > timezone.now():
            return client
    client, expiry = lookup(raw_key)
    if client is not None and entry is None:
        _cache_call("add", name, (client, expiry), timeout=seconds)
    return client


def _cache_call(method: str, *args, **kwargs):
    global paused_until
    if time.monotonic() < paused_until:
        return None
    try:
        return getattr(caches[CACHE], method)(*args, **kwargs)
    except Exception:
        # The database answers alone meanwhile; a strike lost here ends with its window.
        paused_until = time.monotonic() + CACHE_PAUSE_SECONDS
        logger.warning(
            "API-key cache unavailable; checking keys in the database for %s s", CACHE_PAUSE_SECONDS, exc_info=True
        )
        return None


def strike_on_commit(hashes: list[str]) -> None:
    """Strike the answers kept for these key hashes once the current transaction commits."""
    seconds = settings.CONDOR_API_KEY_CACHE_SECONDS
    if hashes and seconds > 0:
        transaction.on_commit(lambda: _cache_call("set_many", dict.fromkeys(hashes, STRUCK), timeout=seconds))


def _key_changed(sender, instance, created=False, **_):
    if not created:
        strike_on_commit([instance.hashed_key])


def _client_changed(sender, instance, created=False, **_):
    if not created:
        strike_on_commit(list(ApiClientKey.objects.filter(client=instance).values_list("hashed_key", flat=True)))


def connect() -> None:
    post_save.connect(_key_changed, sender=ApiClientKey, dispatch_uid="api-key-cache-key-save")
    post_delete.connect(_key_changed, sender=ApiClientKey, dispatch_uid="api-key-cache-key-delete")
    post_save.connect(_client_changed, sender=ApiClient, dispatch_uid="api-key-cache-client-save")
