import pgtrigger
from django.conf import settings
from django.db import models


class AuditKind(models.TextChoices):
    VERDICT = "verdict"
    SUSPEND = "suspend"
    DECISION = "decision"
    CONSUME = "consume"
    EXPIRY = "expiry"
    RUN_CLOSE = "run_close"
    TAINT = "taint"
    REGISTRY_CHANGE = "registry_change"


class AuditEvent(models.Model):
    """Append-only record of every verdict and decision, for compliance staff."""

    Kind = AuditKind

    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    kind = models.CharField(max_length=24, choices=AuditKind.choices)
    # Who acted: a logged-in user (reviewer, admin) or an API client.
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_client = models.ForeignKey(
        "approvals.ApiClient", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor = models.CharField(max_length=160, help_text="Display name of the actor at the time.")
    session_id = models.UUIDField(null=True, blank=True)
    run_id = models.UUIDField(null=True, blank=True, db_index=True)
    approval_id = models.UUIDField(null=True, blank=True, db_index=True)
    tool = models.CharField(max_length=120, blank=True)
    decision = models.CharField(max_length=32, blank=True)
    rule_id = models.CharField(max_length=80, blank=True)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-id"]
        triggers = [
            pgtrigger.Protect(name="audit_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.tool or ''} {self.decision or ''}".strip()
