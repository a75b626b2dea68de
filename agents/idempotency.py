"""Idempotency-Key: the first completed response to a key is stored and replayed for retries.

Only what happened is stored (Stripe's rule): a refusal changed nothing, so it is not kept
under the key, and a retry with the same key after the cause went away (the reviewer
approved) runs again instead of hearing the old refusal for as long as the key lives.
"""

import hashlib
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from agents.models import IdempotencyRecord
from core.errors import CondorError, IdempotencyKeyReused, InvalidPayload
from core.hashing import canonical_json

MAX_KEY_LENGTH = 255


def fingerprint(method: str, path: str, body: dict) -> str:
    digest = hashlib.sha256()
    for part in (method.encode(), b"\0", path.encode(), b"\0", canonical_json(body)):
        digest.update(part)
    return digest.hexdigest()


def run_once(client, key: str, request_fingerprint: str, handler: Callable[[], tuple[int, dict]]) -> tuple[int, dict]:
    """Answer with `handler` the first time `key` is seen for `client`; replay that answer afterwards.

    The record is inserted before the handler runs, in the same transaction: a
    concurrent retry with the same key blocks on the unique index until the first
    commits, then replays its answer instead of running the handler twice.

    A CondorError from the handler is a refusal: it is answered, never stored. The
    handler's own atomic blocks have rolled its changes back by then; what it wrote
    on purpose to record the refusal (an audit row, approvals/refusals.py) commits,
    and the record goes, so a retry after the cause went away runs again.
    """
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidPayload(f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.")
    refusal = None
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                client=client, key=key, fingerprint=request_fingerprint, response_status=0, response_body={}
            )
            try:
                status, body = handler()
            except CondorError as error:
                refusal = error
                record.delete()
            else:
                record.response_status, record.response_body = status, body
                record.save(update_fields=["response_status", "response_body"])
    except IntegrityError:
        stored = IdempotencyRecord.objects.get(client=client, key=key)
        if stored.fingerprint != request_fingerprint:
            raise IdempotencyKeyReused() from None
        return stored.response_status, stored.response_body
    if refusal is not None:
        raise refusal
    return status, body


def prune_expired(now) -> int:
    """The sweep's step: delete the records older than CONDOR_IDEMPOTENCY_TTL_SECONDS (one DELETE, its own
    transaction when called outside one); how many went."""
    cutoff = now - timedelta(seconds=settings.CONDOR_IDEMPOTENCY_TTL_SECONDS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
