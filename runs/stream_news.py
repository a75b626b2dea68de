"""One run stream's subscription to its run's Channels group: join, wait for a push, leave.

The stream is an async generator served by Django's ASGI handler, which cancels it
when daphne reports the client gone; that cancel is the only signal a waiting stream
gets, so the group membership and the channel's receive must not depend on it being
seen inside the channel layer. On Python 3.11, `asyncio.wait_for` swallows a cancel
that arrives in the loop iteration in which the awaitable it wraps completes
(CPython gh-86296, fixed in 3.12), and redis-py sends every command through
`wait_for` when a socket timeout is set. A cancel that reached channels_redis'
`receive()` could so be lost: the receive went on blocking in Redis, the stream's own
`wait_for(receive)` waited for it, and the stream left its group seconds later, or
when daphne killed it.

So the receive runs as a task of its own that outlives heartbeats; the stream waits
on it with `asyncio.wait`, which never swallows a cancel; and leaving cancels that
task until it has really ended (core.channel_layer.ended, which the deployed
layer's own receive also uses, for the inbox consumer's sake).
"""

import asyncio
import logging

from channels.layers import get_channel_layer

from core.channel_layer import ended
from runs.listeners import Listening
from runs.publish import run_group

logger = logging.getLogger(__name__)


def _raise_if_cancel_was_lost() -> None:
    """Honour a cancel that a library awaited by this task swallowed (its count stays up)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError()


class RunNews:
    """`await news.join()`, then `await news.wait(seconds)` → True on a push; `await news.leave()` at the end.

    Joined means in the run's group and marked as listening to it (runs/listeners.py), both
    before the stream replays the outbox. Without a channel layer, or with one that fails to
    join, `wait` sleeps the interval and says no push came: the stream then polls the database.
    """

    def __init__(self, run_id):
        self.layer = get_channel_layer()
        self.group = run_group(run_id)
        self.channel: str | None = None
        self.listening = False
        self.mark = Listening(self.group)
        self.receiving: asyncio.Task | None = None

    async def join(self) -> None:
        if self.layer is None:
            return
        try:
            # Named before the add: an add that failed or was cancelled half way may
            # still have landed in Redis, and leave() removes it.
            self.channel = await self.layer.new_channel()
            await self.layer.group_add(self.group, self.channel)
            await self.mark.mark()
        except Exception:
            logger.warning("channel layer unavailable; %s falls back to polling", self.group, exc_info=True)
            return
        self.listening = True
        _raise_if_cancel_was_lost()  # the client left while the layer was joining

    async def wait(self, seconds: float) -> bool:
        """True when a push arrived within `seconds`, False when the interval passed first."""
        if not self.listening:
            await asyncio.sleep(seconds)
            return False
        await self.mark.renew()
        if self.receiving is None:
            # Kept across heartbeats: a receive cancelled every interval would cost a
            # Redis reconnect each time (redis-py drops a connection cancelled mid-read).
            self.receiving = asyncio.ensure_future(self.layer.receive(self.channel))
        done, _ = await asyncio.wait({self.receiving}, timeout=seconds)
        if not done:
            return False
        received, self.receiving = self.receiving, None
        error = asyncio.CancelledError() if received.cancelled() else received.exception()
        if error is None:
            return True
        logger.warning("channel receive failed; polling instead", exc_info=error)
        await asyncio.sleep(seconds)
        return False

    async def leave(self) -> None:
        """Leave the group, then make sure the receive task has ended."""
        receiving, self.receiving = self.receiving, None
        if receiving is not None:
            receiving.cancel()
        if self.channel is not None:
            try:
                await self.layer.group_discard(self.group, self.channel)
            except Exception:
                logger.debug("group_discard failed for %s", self.channel, exc_info=True)
        if receiving is not None:
            await ended(receiving)
