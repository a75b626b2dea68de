from sessions_app.models.cards import PinnedCard, ReportedCard
from sessions_app.models.entities import EntityKind, LinkedEntity
from sessions_app.models.message import Message, MessageRole
from sessions_app.models.session import (
    CARE_UNIT_MAX_LENGTH,
    AgeBandChoice,
    AutonomyChoice,
    Session,
    TaintCannotBeCleared,
)

__all__ = [
    "CARE_UNIT_MAX_LENGTH",
    "AgeBandChoice",
    "AutonomyChoice",
    "EntityKind",
    "LinkedEntity",
    "Message",
    "MessageRole",
    "PinnedCard",
    "ReportedCard",
    "Session",
    "TaintCannotBeCleared",
]
