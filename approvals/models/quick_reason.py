from django.core.exceptions import ValidationError
from django.db import models

from core.text_limits import has_control_characters


class QuickReason(models.Model):
    """A rejection reason governance offers reviewers as one click in the reject form; still editable there.

    Shown in `position` order; an inactive one is kept (its audit trail reads on) but not offered.
    """

    text = models.CharField(
        max_length=200,
        unique=True,
        help_text='The reason as the reviewer sees it and the agent is told, e.g. "Duplicate of an existing order".',
    )
    position = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first in the reject form.")
    active = models.BooleanField(default=True, help_text="Offered in the inbox's reject form.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "text"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(text=""), name="quick_reason_text_not_blank"),
        ]

    def __str__(self) -> str:
        return self.text

    def clean(self):
        self.text = (self.text or "").strip()
        if not self.text:
            raise ValidationError({"text": "A reason cannot be blank."})
        # Sent to the agent as a rejection reason: the same characters a reviewer's reason may hold.
        if has_control_characters(self.text, multiline=False):
            raise ValidationError({"text": "A reason cannot contain control characters or line breaks."})

    def snapshot(self) -> dict:
        """The reason as an audit row records it."""
        return {"text": self.text, "position": self.position, "active": self.active}


def offered_quick_reasons() -> list[str]:
    """The texts the reject form offers, in order."""
    return list(QuickReason.objects.filter(active=True).values_list("text", flat=True))
