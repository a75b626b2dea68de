from registry.models.access_grant import AccessGrant, AccessGrantStatus
from registry.models.proposal import Proposal, ProposalStatus
from registry.models.tool_change import ToolChange, ToolChangeStatus
from registry.models.tools import ToolDescriptor

__all__ = [
    "AccessGrant",
    "AccessGrantStatus",
    "Proposal",
    "ProposalStatus",
    "ToolChange",
    "ToolChangeStatus",
    "ToolDescriptor",
]
