"""Which cards a reviewer may see: the one rule every reader of cards goes through.

The websocket snapshot and each push, and the polling snapshot, all ask here.
Today every active reviewer sees every pending card (SPEC section 10: "with no
team defined, every reviewer sees every card"). Review teams narrow
`ReviewerScope` to the care units of the reviewer's teams: load them once in
`reviewer_scope`, filter in `visible` and `can_see`, and every reader follows.
"""

from dataclasses import dataclass

from django.utils import timezone

from approvals.models import Approval, ApprovalStatus
from condor.auth import is_reviewer


@dataclass(frozen=True)
class ReviewerScope:
    """What one reviewer may see, read from the database once per message, not once per card."""

    user_id: int

    def visible(self, approvals):
        """`approvals` (a queryset) narrowed to what this reviewer may see."""
        return approvals

    def can_see(self, card: dict) -> bool:
        """Whether a card built by approvals/cards.py may be shown to this reviewer."""
        return isinstance(card, dict)


def reviewer_scope(user) -> ReviewerScope | None:
    """The scope of an active, logged-in reviewer; None for anyone else."""
    if not is_reviewer(user) or not user.is_active:
        return None
    return ReviewerScope(user_id=user.pk)


def pending_approvals(scope: ReviewerScope):
    """The cards waiting for a decision that `scope` may see, soonest deadline first."""
    pending = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__gt=timezone.now())
    return scope.visible(pending).select_related("session__client").order_by("expires_at", "pk")
