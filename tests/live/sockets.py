"""The inbox websocket under test: WebsocketCommunicator against the real ASGI stack.

condor.asgi.application with its AllowedHostsOriginValidator and AuthMiddlewareStack,
a real session cookie, and the channel layer the settings name (Redis in CI).

pytest-asyncio is not installed, so an async test body runs through `in_event_loop`;
sync Django calls inside it go through `sync` (they run on the test's main thread,
on the test's database connection).
"""

import functools
from contextlib import asynccontextmanager

from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from tests.helpers.waits import HANG_SECONDS

ALLOWED_ORIGIN = b"http://127.0.0.1"
# A push is a few ms; the bound is only reached by one that never comes.
PUSH_TIMEOUT = HANG_SECONDS


def in_event_loop(test):
    """Run an async test function to completion in one event loop, as a plain pytest test."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        return async_to_sync(test)(*args, **kwargs)

    return run


def sync(function, *args, **kwargs):
    return sync_to_async(function)(*args, **kwargs)


def _session_cookie(user, browser=None) -> bytes:
    if browser is None:
        browser = Client()
        browser.force_login(user)
    return f"sessionid={browser.cookies['sessionid'].value}".encode()


async def inbox_socket(
    user=None, *, origin: bytes = ALLOWED_ORIGIN, host: bytes = b"127.0.0.1", browser=None
) -> WebsocketCommunicator:
    """A not yet connected socket to /ws/inbox/, logged in as `user` (or anonymous).

    `browser`: a logged-in test Client whose session the socket shares (to log it out later).
    """
    from condor.asgi import application

    headers = [(b"origin", origin), (b"host", host)]
    if user is not None:
        headers.append((b"cookie", await sync(_session_cookie, user, browser)))
    return WebsocketCommunicator(application, "/ws/inbox/", headers=headers)


async def refused(user=None, **kwargs) -> bool:
    socket = await inbox_socket(user, **kwargs)
    connected, _ = await socket.connect(timeout=PUSH_TIMEOUT)
    if connected:
        await socket.disconnect()
    return not connected


async def all_pages(socket, first: dict) -> list[dict]:
    """The cards of `first` (the snapshot) and of every page after it, asked for as the page does."""
    cards, frame = list(first["cards"]), first
    while frame["cursor"] is not None:
        cursor = frame["cursor"]
        await socket.send_json_to({"type": "page", "cursor": cursor})
        frame = await socket.receive_json_from(timeout=PUSH_TIMEOUT)
        assert (frame["type"], frame["after"]) == ("page", cursor), frame
        cards += frame["cards"]
    return cards


@asynccontextmanager
async def connected_inbox(user, **kwargs):
    """A reviewer's open inbox; yields (socket, every card of the snapshot's pages)."""
    socket = await inbox_socket(user, **kwargs)
    connected, code = await socket.connect(timeout=PUSH_TIMEOUT)
    assert connected, f"the inbox refused the socket (close code {code})"
    try:
        snapshot = await socket.receive_json_from(timeout=PUSH_TIMEOUT)
        assert snapshot["type"] == "snapshot"
        yield socket, await all_pages(socket, snapshot)
    finally:
        await socket.disconnect()


async def next_message(socket) -> dict:
    return await socket.receive_json_from(timeout=PUSH_TIMEOUT)


async def pong_is_next(socket) -> bool:
    """Ping the inbox; True when its pong is the next message, so nothing was pushed before it.

    The consumer handles its socket's messages and its channel layer's one at a time,
    so a push that reached it before the ping goes out before the pong: a "nothing
    arrives" check that ends here neither waits out a timer nor ends before a slow push.
    The ping re-checks the reviewer's standing (inbox/consumers.py), so it is no
    marker where the point is that nothing told the socket to. A push goes out before
    the request that made it answers (runs/publish.py), so none can come after the pong.
    """
    await socket.send_json_to({"type": "ping"})
    return await next_message(socket) == {"type": "pong"}
