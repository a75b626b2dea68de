"""Appending and dropping conversation messages (the client's own record of the chat)."""

from django.db import IntegrityError, transaction

from core.errors import InvalidPayload, MessageExists, NotFound
from sessions_app.models import Message
from sessions_app.models.message import new_message_id


@transaction.atomic
def append_message(session, *, role: str, parts: list, run_id=None, message_id: str | None = None) -> Message:
    """Append a message. `run_id` must be a run of this session; a taken `message_id` is 409."""
    if run_id is not None and not session.runs.filter(pk=run_id).exists():
        raise InvalidPayload("'run' is not a run of this session.")
    try:
        # A savepoint: the unique constraint decides a race between two appends of one id.
        with transaction.atomic():
            return Message.objects.create(
                session=session, role=role, parts=parts, run_id=run_id, message_id=message_id or new_message_id()
            )
    except IntegrityError:
        raise MessageExists() from None


def drop_message(session, message_id: str) -> None:
    deleted, _ = Message.objects.filter(session=session, message_id=message_id).delete()
    if not deleted:
        raise NotFound("No such message in this session.")
