"""API keys looked up once every few seconds per process, not on every request.

An agent sends its key with every gate call, and the key's check is a SELECT
(plus a hash). The answer is kept for CONDOR_API_KEY_CACHE_SECONDS: a key
revoked or expired in another process stops working within that window; one
revoked through the ORM in this process (admin, `save()`, `delete()`) stops at
once, because those writes empty the cache. Only valid keys are kept: an unknown
or revoked key is looked up again each time, so a key that was just created
works at once. 0 turns the cache off.
"""

import hashlib
import threading
import time

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

_lock = threading.Lock()
_entries: dict[str, tuple[float, object, object]] = {}  # digest -> (fetched at, client, expiry_date)
# Bumped by every clear: a lookup that began before a clear does not store its answer after it.
_generation = 0


def _digest(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def cached_client(raw_key: str, lookup):
    """The ApiClient of `raw_key` (None if it is not a valid key), `lookup(raw_key) -> (client, expiry)` on a miss."""
    seconds = settings.CONDOR_API_KEY_CACHE_SECONDS
    if seconds <= 0:
        client, _ = lookup(raw_key)
        return client
    digest = _digest(raw_key)
    now = time.monotonic()
    entry = _entries.get(digest)
    if entry is not None and now - entry[0] < seconds:
        _, client, expiry = entry
        if expiry is None or expiry > timezone.now():
            return client
    generation = _generation
    client, expiry = lookup(raw_key)
    with _lock:
        if client is None:
            _entries.pop(digest, None)
        elif generation == _generation:
            _entries[digest] = (now, client, expiry)
    return client


def _clear_now() -> None:
    global _generation
    with _lock:
        _generation += 1
        _entries.clear()


def clear(**_) -> None:
    """Forget every key now, and again when the writing transaction commits: until then another
    thread still reads the key as it was, and would keep that answer for the whole window."""
    _clear_now()
    transaction.on_commit(_clear_now)


def connect() -> None:
    from approvals.models import ApiClient, ApiClientKey

    for model in (ApiClientKey, ApiClient):
        post_save.connect(clear, sender=model, dispatch_uid=f"api-key-cache-{model.__name__}-save")
        post_delete.connect(clear, sender=model, dispatch_uid=f"api-key-cache-{model.__name__}-delete")
