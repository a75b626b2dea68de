"""The reviewers' live inbox over /ws/inbox/: a snapshot on connect, then pushes.

The snapshot is the first page of the pending cards with their total; the page asks
for each next one (`{"type": "page", "cursor": …}`) as the reviewer scrolls
(inbox/pages.py). Each page is built with the reviewer's scope read at that
moment, and each push that changes the count carries the new `total`.

A socket outlives the checks made when it opened, so the reviewer's standing is
read again (session, active account, reviewers group: approvals/visibility.py) on
every push and every ping, and the socket is closed the moment it no longer holds.
Logging out, deactivation and leaving the group also tell the user's sockets to
check at once (inbox/socket_signals.py), so a closed socket does not wait for
the next card; a team edit, or a session with open cards moved to another unit,
has every socket send its snapshot again.
"""

import asyncio
import hashlib
import json
import time
from types import SimpleNamespace

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib import auth
from django.utils.module_loading import import_string

from approvals.visibility import ReviewerScope, reviewer_scope
from core.errors import CondorError, InvalidCursor
from inbox import pages as inbox_pages
from runs.listeners import Listening
from runs.publish import INBOX_GROUP

# Pushes that change how many cards wait, so they carry the new total.
COUNTED_PUSHES = {"card.added", "card.removed"}
# Remembered event ids per socket, to drop a re-published duplicate.
_SEEN_LIMIT = 2048
# Close codes the page understands: sign in again / no longer allowed (it stops reconnecting).
SIGNED_OUT, NOT_A_REVIEWER = 4401, 4403
# The page sends {"type": "ping"} and page requests; anything much bigger is not from it.
MAX_CLIENT_MESSAGE_CHARS = 4096
# A socket sends its snapshot again at most this often: a burst of team edits or care-unit
# changes (an agent can PATCH its sessions) is one snapshot now and one at the window's end.
RESYNC_EVERY_SECONDS = 1.0


def user_group(user_id) -> str:
    """The group of one user's inbox sockets, for telling them to re-check."""
    return f"inbox.user.{user_id}"


def session_digest(session_key: str | None) -> str:
    """Names a session in a pushed message without putting the session key itself on the wire."""
    return hashlib.sha256(f"inbox-socket:{session_key}".encode()).hexdigest()[:32]


def _standing(session_key: str | None, user_id) -> tuple[ReviewerScope | None, int]:
    """(scope, 0) while the session still logs in this user as a reviewer, else (None, close code)."""
    engine = import_string(f"{settings.SESSION_ENGINE}.SessionStore")
    # Django's own check (session present and unexpired, account active, password
    # unchanged) on a freshly loaded session, not the copy read at connect time.
    user = auth.get_user(SimpleNamespace(session=engine(session_key)))
    if not user.is_authenticated or user.pk != user_id:
        return None, SIGNED_OUT
    scope = reviewer_scope(user)
    return (scope, 0) if scope is not None else (None, NOT_A_REVIEWER)


@database_sync_to_async
def _connect_scope(user) -> ReviewerScope | None:
    return reviewer_scope(user) if user is not None else None


@database_sync_to_async
def page_frame(scope: ReviewerScope, cursor: str | None = None) -> str:
    """The snapshot (no cursor) or the page after `cursor`, as the message's text: each card is
    encoded once, to size the page, and sent as written (no second json.dumps of the page)."""
    return inbox_pages.frame(scope, cursor)


@database_sync_to_async
def pending_total(scope: ReviewerScope) -> int:
    return inbox_pages.pending_total(scope)


def client_message(text: str | None) -> dict | None:
    """The browser's message as a JSON object, or None for anything else (binary, oversized, not JSON)."""
    if text is None or len(text) > MAX_CLIENT_MESSAGE_CHARS:
        return None
    try:
        content = json.loads(text)
    except ValueError:
        return None
    return content if isinstance(content, dict) else None


class InboxConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        reviewer = await _connect_scope(user)
        if reviewer is None:
            await self.close(code=NOT_A_REVIEWER)  # before accept: the handshake is refused
            return
        self.user_id = user.pk
        self.session_key = self.scope["session"].session_key
        self.closing = False
        self.seen: dict[int, None] = {}
        self.resynced_at, self.resync_later = float("-inf"), None
        # Say so (runs/listeners.py) and join first, then snapshot: a card added in
        # between arrives twice (an update to the client), never zero times.
        self.listening = Listening(INBOX_GROUP)
        await self.listening.mark()
        await self.channel_layer.group_add(INBOX_GROUP, self.channel_name)
        await self.channel_layer.group_add(user_group(self.user_id), self.channel_name)
        await self.accept()
        await self.send(text_data=await page_frame(reviewer))

    async def disconnect(self, code):
        if getattr(self, "resync_later", None) is not None:
            self.resync_later.cancel()
        if hasattr(self, "seen"):
            await self.channel_layer.group_discard(INBOX_GROUP, self.channel_name)
            await self.channel_layer.group_discard(user_group(self.user_id), self.channel_name)

    async def _still_allowed(self) -> ReviewerScope | None:
        """The reviewer's scope, read fresh; None (and the socket closed) once it no longer holds."""
        if self.closing:
            return None
        reviewer, code = await database_sync_to_async(_standing)(self.session_key, self.user_id)
        if reviewer is None:
            await self._end(code)
        return reviewer

    async def _end(self, code: int) -> None:
        self.closing = True
        await self.close(code=code)

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        # Not the JSON consumer's decoding, which ends the socket (1011) on a bad message.
        content = client_message(text_data)
        if content is None:
            await self.send_json(
                {
                    "type": "error",
                    "error": "invalid_message",
                    "detail": 'Messages must be JSON objects, such as {"type": "ping"}.',
                }
            )
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        kind = content.get("type")
        if kind == "ping" and await self._still_allowed() is not None:
            await self.listening.renew()  # the page pings every half minute while it is open
            await self.send_json({"type": "pong"})
        elif kind == "page":
            await self._send_page(content.get("cursor"))

    async def _send_page(self, cursor) -> None:
        """The page after `cursor`, for the reviewer as they stand now (no page once they may not read)."""
        reviewer = await self._still_allowed()
        if reviewer is None:
            return
        try:
            if not isinstance(cursor, str):  # the first page comes on connect; a request continues one
                raise InvalidCursor("A page request carries the cursor of the page before it.")
            text = await page_frame(reviewer, cursor)
        except CondorError as error:
            await self.send_json({"type": "error", "error": error.code, "detail": error.detail})
            return
        await self.send(text_data=text)

    async def inbox_message(self, event):
        event_id = event.get("event_id")
        if event_id in self.seen:
            return
        self.seen[event_id] = None
        if len(self.seen) > _SEEN_LIMIT:
            self.seen.pop(next(iter(self.seen)))
        reviewer = await self._still_allowed()
        if reviewer is None:
            return
        message = event["message"]
        # One group for every socket, filtered here per push with the scope just read
        # (why not per-team groups: approvals/visibility.py).
        if not reviewer.can_see_message(message):
            return
        if message.get("type") in COUNTED_PUSHES:
            message = {**message, "total": await pending_total(reviewer)}
        await self.send_json(message)

    async def inbox_resync(self, event):
        """Who sees which card changed (socket_signals.py): the snapshot again, by the scope read then.

        At most one a RESYNC_EVERY_SECONDS: within the window the resync waits for its end, and
        the ones that come meanwhile are that same resync (it reads the scope when it runs).
        """
        if self.resync_later is not None:
            return
        wait = self.resynced_at + RESYNC_EVERY_SECONDS - time.monotonic()
        if wait <= 0:
            await self._resync()
        else:
            self.resync_later = asyncio.get_running_loop().create_task(self._resync_after(wait))

    async def _resync_after(self, wait: float) -> None:
        await asyncio.sleep(wait)
        self.resync_later = None
        await self._resync()

    async def _resync(self) -> None:
        self.resynced_at = time.monotonic()
        reviewer = await self._still_allowed()
        if reviewer is not None:
            await self.send(text_data=await page_frame(reviewer))

    async def inbox_recheck(self, event):
        """Sent to the user's group when their login or permissions changed (socket_signals.py)."""
        if self.closing:
            return
        if event.get("ended_session") == session_digest(self.session_key):
            await self._end(SIGNED_OUT)  # this very session logged out; it may not be flushed yet
            return
        await self._still_allowed()
