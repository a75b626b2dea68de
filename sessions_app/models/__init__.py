from sessions_app.models.cards import PinnedCard, ReportedCard
from sessions_app.models.entities import EntityKind, LinkedEntity
from sessions_app.models.message import Message, MessageRole
from sessions_app.models.session import (
    AgeBandChoice,
    AutonomyChoice,
    Session,
    TaintCannotBeCleared,
)

__all__ = [
    "AgeBandChoice", "AutonomyChoice", "EntityKind", "LinkedEntity", "Message", "MessageRole", "PinnedCard",
    "ReportedCard", "Session", "TaintCannotBeCleared",
]
