"""A small bounded queue between a request's commit and its push (issue 11).

A request must not wait for its own push: its on_commit hook puts the committed
events here and returns, and one background thread takes them out and pushes them
(runs/publish.py). Nothing durable rides on this queue. The events are committed
rows whose `published_at` stays null until a push went out, so a push that fails,
is refused because the queue is full, or dies with its process is re-sent by the
outbox drainer; consumers drop a repeat by event id.
"""

import atexit
import logging
import os
import threading
from collections import deque

logger = logging.getLogger(__name__)

# Events waiting at most. Past it Redis is hung (the thread is stuck in one push for up
# to PUBLISH_TIMEOUT_SECONDS) or the process cannot keep up; a new push is refused
# and left to the drainer, so a stuck Redis holds a bounded amount of memory.
MAX_QUEUED = 1000
# How long process exit waits for the pushes still queued; the drainer has the rest.
EXIT_FLUSH_SECONDS = 5.0


class PushQueue:
    """Items for one daemon thread, which hands `handler` everything queued at once.

    One round a call: under load, many requests' pushes share one round (one
    stale-card read, one Redis question). After each round, and when the time it
    asked for has come, `settle(forced=, idle=)` runs: the work that may wait for a
    later moment (the published marks, runs/publish.py), and with `idle` (the queue
    ran dry) letting go of what the rounds held. It returns in how many seconds it
    wants to run again, or None when nothing is left to settle. `flush` forces it.
    """

    def __init__(self, handler, settle, *, name: str):
        self._handler, self._settle, self._name = handler, settle, name
        self._reset()
        # A forked child (a Celery prefork worker) inherits the lock and items but not the thread.
        os.register_at_fork(after_in_child=self._reset)
        atexit.register(self.flush, EXIT_FLUSH_SECONDS)

    def _reset(self) -> None:
        self._condition = threading.Condition()
        self._items: deque = deque()
        self._queued = 0  # events queued or in the round being pushed
        self._forced = False  # a flush waits for everything to be settled now
        self._thread: threading.Thread | None = None

    def put(self, item, size: int) -> bool:
        """Queue `item` (`size` events); False, with nothing queued, when MAX_QUEUED would be passed."""
        with self._condition:
            if self._queued + size > MAX_QUEUED:
                return False
            self._items.append((item, size))
            self._queued += size
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()
            self._condition.notify_all()
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued so far has been pushed and settled (or has failed); False when
        `timeout` ran out first."""
        with self._condition:
            if self._thread is None:
                return True
            self._forced = True
            self._condition.notify_all()
            return self._condition.wait_for(lambda: self._queued == 0 and not self._forced, timeout)

    def _work(self) -> None:
        settle_in = None
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._items or self._forced, settle_in)
                round_ = list(self._items)
                self._items.clear()
                forced = self._forced
            if round_:
                try:
                    self._handler([item for item, _ in round_])
                except Exception:  # the thread must outlive any push; the drainer re-sends this round
                    logger.exception("a round of pushes failed; the drainer will re-send it")
            with self._condition:
                emptied = not self._items
            try:
                settle_in = self._settle(forced=forced and emptied, idle=emptied)
            except Exception:
                settle_in = None
                logger.exception("the push thread could not settle its round")
            with self._condition:
                self._queued -= sum(size for _, size in round_)
                if emptied and forced:
                    self._forced = False
                self._condition.notify_all()
