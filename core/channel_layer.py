"""The Redis channel layer, with a receive() that never loses a cancel.

On Python 3.11, `asyncio.wait_for` swallows a cancel that arrives in the loop
iteration in which the awaitable it wraps completes (CPython gh-86296, fixed in
3.12), and redis-py sends every command through `wait_for` when a socket timeout is
set. A cancel that reached channels_redis' `receive()` could so be lost, and the
receive went on blocking in Redis round after round. Channels cancels a consumer's
receive once, when its socket closes, and then waits for it: an inbox socket whose
cancel was lost never ended (its task and its Redis connection stayed), and a test's
event loop never closed.

Here the library's receive runs as a task of its own, waited on with `asyncio.wait`
(which never swallows a cancel); a cancel of the caller cancels that task until it
has really ended, then goes on up.
"""

import asyncio

from channels_redis.core import RedisChannelLayer

# How long a receive that was told to stop gets before it is told again: a lost
# cancel leaves it blocked in Redis for up to a BZPOPMIN round (5 s).
RECANCEL_SECONDS = 1.0


async def ended(task: asyncio.Task) -> None:
    """Cancel `task` until it has ended (a cancel of our own meanwhile does not stop that),
    and read its outcome so asyncio logs no unretrieved error."""
    while not task.done():
        task.cancel()
        try:
            await asyncio.wait({task}, timeout=RECANCEL_SECONDS)
        except asyncio.CancelledError:
            pass  # already on the way out: finish ending the task first
    if not task.cancelled():
        task.exception()


class CancelSafeReceive:
    """A channel layer mixin: `receive()` ends when its caller is cancelled, whatever the layer below does."""

    async def receive(self, channel):
        receiving = asyncio.ensure_future(super().receive(channel))
        try:
            await asyncio.wait({receiving})
        except asyncio.CancelledError:
            await ended(receiving)
            raise
        return receiving.result()


class RedisLayer(CancelSafeReceive, RedisChannelLayer):
    """The deployed layer (settings.CHANNEL_LAYERS when REDIS_URL is set)."""
