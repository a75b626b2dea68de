import uuid

from django.db import models


class MessageRole(models.TextChoices):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


class Message(models.Model):
    """One message of the conversation, as the client's chat front end holds it (AI SDK `UIMessage`).

    `message_id` is the client's own id (useChat makes them), so a restored
    conversation keeps its ids; `seq` orders the conversation.
    """

    seq = models.BigAutoField(primary_key=True)
    # No index of its own: message_session_seq (session, seq) leads with the session and serves
    # every lookup by session (history, the admin inline, the cascade).
    session = models.ForeignKey(
        "sessions_app.Session", on_delete=models.CASCADE, related_name="messages", db_index=False
    )
    message_id = models.CharField(max_length=120, default=new_message_id)
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    parts = models.JSONField(default=list)
    # The run this message belongs to (an assistant turn): history (runs/session_history.py) puts
    # that run's gated calls into it, with the approval state Condor holds. An id, not a ForeignKey:
    # runs are built on sessions, and sessions_app does not know them (tests/test_dependency_direction.py).
    # The database still holds the column to runs_run by its foreign key constraint (sessions_app
    # migration 0001), so a message never names a run that is not there; append_message checks
    # that the run is one of the session's. Runs are never deleted on their own: a session's go
    # with its messages.
    run_id = models.UUIDField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "message_id"], name="one_message_per_id"),
        ]
        indexes = [
            # History: a session's messages in order.
            models.Index(fields=["session", "seq"], name="message_session_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.role} {self.message_id}"
