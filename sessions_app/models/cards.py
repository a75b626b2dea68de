import uuid

from django.db import models


class ReportedCard(models.Model):
    """A card an agent reported with a tool result, kept so a later pin can name it.

    Written in the result's transaction (approvals/results.py), so a pin later in
    the same run finds it. `key` is the card's identity in the session: its own
    `id` when the agent gave one, else `<tool_call_id>#<index>`.
    """

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="reported_cards")
    key = models.CharField(max_length=200)
    run_id = models.UUIDField()
    tool_call_id = models.CharField(max_length=120)
    kind = models.CharField(max_length=60)
    title = models.CharField(max_length=200)
    data = models.JSONField(default=dict)
    reported_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # A card reported again under the same identity replaces the earlier one.
            models.UniqueConstraint(fields=["session", "key"], name="one_reported_card_per_key"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.title}"


class PinnedCard(models.Model):
    """A card the conversation keeps in view. Only sessions_app/pinned_cards.py writes these."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="pinned_cards")
    kind = models.CharField(max_length=60)
    title = models.CharField(max_length=200)
    data = models.JSONField(default=dict)
    order = models.PositiveIntegerField()
    source_card = models.CharField(
        max_length=200, blank=True, help_text="The reported card's key, when pinned from one."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["order"]
        constraints = [
            # Ranks are a permutation of 0..n-1. DEFERRABLE INITIALLY IMMEDIATE: checked at
            # the end of the reranking UPDATE, not row by row (PostgreSQL would refuse a swap).
            models.UniqueConstraint(
                fields=["session", "order"], name="pinned_card_rank_unique", deferrable=models.Deferrable.IMMEDIATE
            ),
            models.UniqueConstraint(
                fields=["session", "source_card"], name="one_pin_per_source_card", condition=~models.Q(source_card="")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order}. {self.title}"
