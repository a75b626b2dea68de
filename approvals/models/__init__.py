from approvals.models.approval import Approval, ApprovalStatus, ReasonCode
from approvals.models.quick_reason import QuickReason
from approvals.models.review_team import ReviewTeam
from approvals.models.tool_call import ToolCall

__all__ = [
    "Approval",
    "ApprovalStatus",
    "QuickReason",
    "ReasonCode",
    "ReviewTeam",
    "ToolCall",
]
