from approvals.models.access_grant import AccessGrant, AccessGrantStatus
from approvals.models.approval import Approval, ApprovalStatus, ReasonCode
from approvals.models.audit import AuditEvent
from approvals.models.clients import ApiClient, ApiClientKey
from approvals.models.heartbeat import Heartbeat
from approvals.models.idempotency import IdempotencyRecord
from approvals.models.quick_reason import QuickReason
from approvals.models.review_team import ReviewTeam
from approvals.models.tool_call import ToolCall
from approvals.models.tool_change import ToolChange, ToolChangeStatus
from approvals.models.tools import ToolDescriptor

__all__ = [
    "AccessGrant",
    "AccessGrantStatus",
    "ApiClient",
    "ApiClientKey",
    "Approval",
    "ApprovalStatus",
    "AuditEvent",
    "Heartbeat",
    "IdempotencyRecord",
    "QuickReason",
    "ReasonCode",
    "ReviewTeam",
    "ToolCall",
    "ToolChange",
    "ToolChangeStatus",
    "ToolDescriptor",
]
