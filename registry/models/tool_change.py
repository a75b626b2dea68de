from django.db import models

from registry.models.proposal import Proposal, ProposalStatus, decided_iff_not_pending

ToolChangeStatus = ProposalStatus


class ToolChange(Proposal):
    """A registry edit that lowers risk, waiting for a second governance admin (four eyes).

    `before` and `after` are the descriptor's fields as registry.descriptors.snapshot
    gives them (`before` is null when the tool had no row); `reasons` says in words
    why the edit counts as lowering risk (registry/changes.py).
    """

    Status = ToolChangeStatus

    tool = models.CharField(max_length=120)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField()
    reasons = models.JSONField(default=list)

    class Meta(Proposal.Meta):
        db_table = "approvals_toolchange"  # the table it had before the layout move
        constraints = [
            # A second proposal would be judged against a state the first may change.
            models.UniqueConstraint(
                fields=["tool"], condition=models.Q(status="pending"), name="one_pending_change_per_tool"
            ),
            decided_iff_not_pending("tool_change_decided_iff_not_pending"),
            # Four eyes, in the database: whoever proposed may withdraw (reject), never confirm.
            models.CheckConstraint(
                name="tool_change_confirmed_by_another_admin",
                condition=~models.Q(status="confirmed") | ~models.Q(decided_by=models.F("proposed_by")),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool} change #{self.pk} ({self.status})"
