from django.conf import settings
from django.db import models


class ToolChangeStatus(models.TextChoices):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"


class ToolChange(models.Model):
    """A registry edit that lowers risk, waiting for a second governance admin (four eyes).

    `before` and `after` are the descriptor's fields as approvals.registry.snapshot
    gives them (`before` is null when the tool had no row); `reasons` says in words
    why the edit counts as lowering risk (approvals/registry_changes.py).
    """

    Status = ToolChangeStatus

    tool = models.CharField(max_length=120)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField()
    reasons = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=ToolChangeStatus.choices, default=ToolChangeStatus.PENDING)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    proposed_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-proposed_at"]
        constraints = [
            # A second proposal would be judged against a state the first may change.
            models.UniqueConstraint(fields=["tool"], condition=models.Q(status="pending"),
                                    name="one_pending_change_per_tool"),
            models.CheckConstraint(
                name="tool_change_decided_iff_not_pending",
                condition=models.Q(status="pending", decided_by__isnull=True, decided_at__isnull=True)
                | (~models.Q(status="pending") & models.Q(decided_by__isnull=False, decided_at__isnull=False)),
            ),
            # Four eyes, in the database: whoever proposed may withdraw (reject), never confirm.
            models.CheckConstraint(
                name="tool_change_confirmed_by_another_admin",
                condition=~models.Q(status="confirmed") | ~models.Q(decided_by=models.F("proposed_by")),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool} change #{self.pk} ({self.status})"
