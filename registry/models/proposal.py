from django.conf import settings
from django.db import models
from django.utils import timezone


class ProposalStatus(models.TextChoices):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"


class Proposal(models.Model):
    """A four-eyes proposal: one governance admin proposes, another confirms, either may reject.

    Subclasses (ToolChange, AccessGrant) name their own constraints: decided iff not
    pending, and confirmed by someone other than the proposer.
    """

    status = models.CharField(max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PENDING)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    proposed_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)

    class Meta:
        abstract = True
        ordering = ["-proposed_at"]

    def decide(self, status: str, user, reason: str = "") -> None:
        """Record the decision on the (locked) row."""
        self.status, self.decided_by, self.decided_at, self.decision_reason = status, user, timezone.now(), reason
        self.save(update_fields=["status", "decided_by", "decided_at", "decision_reason"])


def decided_iff_not_pending(name: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        name=name,
        condition=models.Q(status="pending", decided_by__isnull=True, decided_at__isnull=True)
        | (~models.Q(status="pending") & models.Q(decided_by__isnull=False, decided_at__isnull=False)),
    )
