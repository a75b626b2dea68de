from django.db import models


class IdempotencyRecord(models.Model):
    """The first response to an Idempotency-Key, replayed for a retry with the same body."""

    client = models.ForeignKey("agents.ApiClient", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # SHA-256 of method, path and canonical body: same key + different request → 422.
    fingerprint = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "approvals_idempotencyrecord"  # the table it had before the layout move
        constraints = [
            models.UniqueConstraint(fields=["client", "key"], name="one_response_per_idempotency_key"),
        ]
