"""The loop every set-based sweep step shares: walk the due rows batch after batch.

A step names its due rows (a queryset) and how to close a batch of them. The walk
reads candidate ids in primary-key order without a lock and hands each batch to
`close_batch` in its own transaction; `close_batch` locks those still due with
SKIP LOCKED (the due condition re-checked under the lock: a row touched since it
was read is left alone) and closes them with set-based statements. Keyset order
means a pass reads each due row at most once: a row busy elsewhere (another beat's
batch, a request) is passed over, not waited on, and the next pass sees it if it is
still due; two beats leapfrog each other's batches instead of queueing.

A batch that fails is rolled back whole and retried row by row, each in its own
transaction, so one bad row is logged and skipped and never holds back the rest.
Each batch's events are written with one INSERT and pushed after its commit; the walk
waits for that push before the next batch.
"""

import logging
import time
import uuid
from collections.abc import Callable
from typing import NamedTuple

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)


def budget_deadline() -> float:
    """When a pass that starts now has spent CONDOR_SWEEP_BUDGET_SECONDS (a time.monotonic() value)."""
    return time.monotonic() + settings.CONDOR_SWEEP_BUDGET_SECONDS


class Share(NamedTuple):
    """The slice `part` of `parts` of the key space: what one of several passes running at once walks.

    A backlog too large for one process is split over worker processes (condor/tasks.py),
    each walking the due rows whose (random, uniform) UUID key falls in its slice, so
    they never contend for the same batch; SKIP LOCKED still keeps them, and any other
    pass, from closing a row twice.
    """

    part: int = 0
    parts: int = 1

    def of(self, due):
        if self.parts == 1:
            return due
        due = due.filter(pk__gte=uuid.UUID(int=self.part * 2**128 // self.parts))
        if self.part < self.parts - 1:
            due = due.filter(pk__lt=uuid.UUID(int=(self.part + 1) * 2**128 // self.parts))
        return due


WHOLE = Share()


def walk(due, close_batch: Callable[[list], int], *, until: float, what: str, share: Share = WHOLE) -> int:
    """Close the rows of `due` (in `share` of the key space) batch by batch until none is left or
    `until` has passed; returns how many closed.

    At least one batch runs however late it is, so no step starves behind another's backlog.
    """
    return _walk(share.of(due), close_batch, until, what)


def _walk(due, close_batch: Callable[[list], int], until: float, what: str) -> int:
    size = settings.CONDOR_SWEEP_BATCH_SIZE
    closed, last = 0, None
    while True:
        page = due if last is None else due.filter(pk__gt=last)
        ids = list(page.order_by("pk").values_list("pk", flat=True)[:size])
        if not ids:
            return closed
        last = ids[-1]
        closed += close_guarded(close_batch, ids, what)
        if len(ids) < size or time.monotonic() >= until:
            return closed


def close_guarded(close_batch: Callable[[list], int], ids: list, what: str) -> int:
    """`close_batch(ids)` in a transaction of its own; if it fails, row by row, skipping (and logging) the bad ones."""
    try:
        with transaction.atomic():
            return close_batch(ids)
    except Exception:
        logger.warning("sweep: a batch of %d %s failed; closing them one by one", len(ids), what, exc_info=True)
    closed = 0
    for pk in ids:
        try:
            with transaction.atomic():
                closed += close_batch([pk])
        except Exception:
            logger.exception("sweep could not close %s %s; continuing", what, pk)
    return closed
