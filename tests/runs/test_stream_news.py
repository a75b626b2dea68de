"""A run stream's group membership ends with its client, whatever the channel layer does with a cancel.

The stream is driven here as Django's ASGI handler drives it: a task iterates the
view's generator and is cancelled when the client goes away.
"""

import asyncio
import os

import pytest
from asgiref.sync import async_to_sync
from channels.layers import DEFAULT_CHANNEL_LAYER, InMemoryChannelLayer, channel_layers

from core.channel_layer import CancelSafeReceive
from runs import stream, stream_news
from runs.publish import run_group
from tests.helpers.waits import HANG_SECONDS as HANG

RUN_ID = "6f1c1b7e-2f0a-4a8e-9d0c-6a1c2b3d4e5f"


class CancelLosingLayer(InMemoryChannelLayer):
    """In-memory, except that receive() carries on through the first cancel it gets.

    What redis-py's send does to a cancel on Python 3.11 when the cancel lands just
    as the command went out (asyncio.wait_for, CPython gh-86296).
    """

    def __init__(self):
        super().__init__()
        self.receiving = asyncio.Event()
        self.cancels_lost = 0

    async def receive(self, channel):
        self.receiving.set()
        try:
            return await super().receive(channel)
        except asyncio.CancelledError:
            if self.cancels_lost:
                raise
            self.cancels_lost += 1
            return await super().receive(channel)


def test_a_stream_whose_client_left_leaves_its_group_even_when_the_layer_loses_the_cancel(monkeypatch):
    layer = CancelLosingLayer()
    monkeypatch.setattr(stream_news, "get_channel_layer", lambda: layer)
    # A parked run: the replay sends nothing new and the run is not terminal.
    monkeypatch.setattr(stream, "_events_after", lambda run_id, after: ([], after, False))
    group = run_group(RUN_ID)

    async def client_goes_away():
        async def serve():
            async for _ in stream.event_stream(RUN_ID, None):
                pass

        serving = asyncio.ensure_future(serve())
        await asyncio.wait_for(layer.receiving.wait(), HANG)  # the stream waits for news
        assert list(layer.groups[group]) != []
        serving.cancel()  # what Django does on http.disconnect
        done, _ = await asyncio.wait({serving}, timeout=HANG)
        assert done, "the stream was still running after its client left"
        assert serving.cancelled()
        assert layer.groups.get(group, {}) == {}
        # The receive got a second cancel after losing the first, and has ended.
        assert layer.cancels_lost == 1
        assert [task for task in asyncio.all_tasks() if "receive" in repr(task.get_coro())] == []

    async_to_sync(client_goes_away)()


class CancelSafeLosingLayer(CancelSafeReceive, CancelLosingLayer):
    """The deployed layer's receive (core.channel_layer.RedisLayer) over a library that loses a cancel."""


def test_a_receive_ends_with_its_caller_even_when_the_library_loses_the_cancel():
    # What Channels does when an inbox socket closes: cancel the consumer's receive once, then
    # wait for it. Were the lost cancel not re-sent, the receive (and the socket's task) would
    # wait for a message forever.
    layer = CancelSafeLosingLayer()

    async def socket_closes():
        receiving = asyncio.ensure_future(layer.receive("inbox.socket!1"))
        await asyncio.wait_for(layer.receiving.wait(), HANG)
        receiving.cancel()
        done, _ = await asyncio.wait({receiving}, timeout=HANG)
        assert done, "the receive was still waiting after its caller was cancelled"
        assert receiving.cancelled() and layer.cancels_lost == 1
        assert [task for task in asyncio.all_tasks() if "receive" in repr(task.get_coro())] == []

    async_to_sync(socket_closes)()


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="times a receive against the real Redis layer")
def test_an_idle_receive_outlasts_a_redis_block_round():
    """channels_redis waits for a message in rounds of BZPOPMIN; an empty round is not an error.

    With redis-py's default 5 s read timeout and channels_redis' 5 s block, the read
    gave up as the round ended, and receive() raised "Timeout reading from ...".
    """
    layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)  # from the settings, not shared
    rounds: list = []  # what each BZPOPMIN round ended with: None (empty), a message, or an error
    round_ended = asyncio.Event()
    block_round = layer._brpop_with_clean

    async def observed_round(*args, **kwargs):
        try:
            result = await block_round(*args, **kwargs)
        except BaseException as error:
            rounds.append(error)
            round_ended.set()
            raise
        rounds.append(result)
        round_ended.set()
        return result

    layer._brpop_with_clean = observed_round

    async def idle_then_message():
        channel = await layer.new_channel()
        receiving = asyncio.ensure_future(layer.receive(channel))
        try:
            await asyncio.wait_for(round_ended.wait(), HANG)
            assert rounds[:1] == [None], rounds
            assert not receiving.done(), receiving.exception()
            await layer.send(channel, {"type": "run.event", "event_id": 1})
            assert (await asyncio.wait_for(receiving, HANG))["event_id"] == 1
        finally:
            receiving.cancel()
            await asyncio.wait({receiving})
            await layer.close_pools()

    async_to_sync(idle_then_message)()
