"""Four eyes: an approval needs `approvals_required` distinct reviewers to approve the same payload.

Each approval is counted on the row (`Approval.approvals`, a list of
`{reviewer, reviewer_id, at, reason, payload_hash}`) under the run and approval
locks decisions.py takes, so of any number of concurrent second approvals exactly
one meets the quorum. Only approvals of the payload now on the table count: an
edit changes the payload hash, so it restarts the count with the editor's approval
(the edited args then stay on the table, in `approved_args`, while it is pending).
"""

from approvals.models import Approval
from core.errors import AlreadyApprovedByYou
from core.hashing import Canonical


def proposal(approval: Approval) -> dict:
    """The args a reviewer approves without editing: the latest edit, else what the agent asked."""
    return approval.approved_args if approval.approved_args is not None else approval.args


def count(approval: Approval, *, user, approved: Canonical, reason: str, now) -> bool:
    """Count `user`'s approval of `approved.value` on the in-memory row; True once the quorum is met.

    `approved.hash` is taken from the args being approved, never from the row: it is
    what the count compares with the payload on the table.
    """
    digest = approved.hash
    if digest == approval.payload_hash:
        votes = [vote for vote in approval.approvals or () if vote.get("payload_hash") == digest]
        if any(vote.get("reviewer_id") == user.pk for vote in votes):
            raise AlreadyApprovedByYou(
                f"You have already approved this payload; it needs {approval.approvals_required} distinct reviewers."
            )
    else:
        # An edit: what earlier reviewers approved is not what would run any more.
        approval.approved_args, approval.payload_hash = approved.value, digest
        votes = []
    votes.append(
        {
            "reviewer": user.get_username(),
            "reviewer_id": user.pk,
            "at": now.isoformat(),
            "reason": reason,
            "payload_hash": digest,
        }
    )
    approval.approvals = votes
    return len(votes) >= approval.approvals_required
