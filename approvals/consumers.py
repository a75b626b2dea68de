"""The reviewers' live inbox over /ws/inbox/: a snapshot on connect, then pushes."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils import timezone

from approvals import cards
from approvals.models import Approval, ApprovalStatus
from condor.auth import is_reviewer
from runs.publish import INBOX_GROUP

# Remembered event ids per socket, to drop a re-published duplicate.
_SEEN_LIMIT = 2048


@database_sync_to_async
def _may_review(user) -> bool:
    return is_reviewer(user)


@database_sync_to_async
def pending_cards() -> list[dict]:
    pending = (
        Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__gt=timezone.now())
        .select_related("session__client")
        .order_by("expires_at")
    )
    return cards.cards_for(pending)


class InboxConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not await _may_review(user):
            await self.close(code=4403)  # before accept: the handshake is refused
            return
        self.seen: dict[int, None] = {}
        # Join first, then snapshot: a card added in between arrives twice (an
        # update to the client), never zero times.
        await self.channel_layer.group_add(INBOX_GROUP, self.channel_name)
        await self.accept()
        await self.send_json({"type": "snapshot", "cards": await pending_cards()})

    async def disconnect(self, code):
        if hasattr(self, "seen"):
            await self.channel_layer.group_discard(INBOX_GROUP, self.channel_name)

    async def receive_json(self, content, **kwargs):
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def inbox_message(self, event):
        event_id = event.get("event_id")
        if event_id in self.seen:
            return
        self.seen[event_id] = None
        if len(self.seen) > _SEEN_LIMIT:
            self.seen.pop(next(iter(self.seen)))
        await self.send_json(event["message"])
