"""The stream chunks that tell the agent what became of its parked call.

Every decision — approve, approve with edits, reject, clarification answered or
declined, expiry, withdrawal — goes through `decision_frames`, which reads the approval row
after the change, so the chunk says exactly what the row says (and the replay,
built from the same persisted event, says it again).
"""

from approvals import bound_context
from approvals.models import Approval, ApprovalStatus
from runs import frames

_RUNNABLE = (ApprovalStatus.APPROVED, ApprovalStatus.CONSUMED)
# Closed with nobody deciding: the chunk's reason says how, in place of a reviewer's words.
_CLOSED_REASON = {ApprovalStatus.EXPIRED: frames.EXPIRED_REASON, ApprovalStatus.WITHDRAWN: frames.WITHDRAWN_REASON}


def decision_frames(approval: Approval) -> list[dict]:
    if approval.status == ApprovalStatus.PENDING:
        # Still waiting (one approval of a quorum counted): nothing is decided, nothing to tell.
        return []
    approved = approval.status in _RUNNABLE
    reason = _CLOSED_REASON.get(approval.status, approval.decision_reason)
    return frames.decision_frames(
        approval_id=str(approval.pk),
        tool_call_id=approval.tool_call_id,
        approved=approved,
        reason=reason,
        args=approval.approved_args if approved else None,
        payload_hash=approval.payload_hash if approved else None,
        bound_context=bound_context.wire(bound_context.bound(approval)),
    )
