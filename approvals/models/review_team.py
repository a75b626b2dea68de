from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from sessions_app.models import CARE_UNIT_MAX_LENGTH


class ReviewTeam(models.Model):
    """A ward's reviewers: they see the cards of sessions whose care_unit the team lists (SPEC section 10).

    The default team takes the cards of units no team lists; at most one team is the default.
    """

    name = models.CharField(max_length=120, unique=True)
    care_units = models.JSONField(
        default=list, blank=True, help_text='The care units this team reviews, e.g. ["ICU", "Cardiology"].'
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="review_teams", blank=True)
    is_default = models.BooleanField(default=False, help_text="Takes the cards of units no team lists.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"],
                condition=models.Q(is_default=True),
                name="one_default_review_team",
                violation_error_message="Another team is already the default team.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def snapshot(self) -> dict:
        """The team as an audit row records it (members by username)."""
        return {
            "name": self.name,
            "care_units": list(self.care_units or []),
            "is_default": self.is_default,
            "members": sorted(self.members.values_list("username", flat=True)),
        }

    def clean(self):
        # A unit longer than a session's care_unit may be could never match a session.
        units = self.care_units
        if not isinstance(units, list) or not all(
            isinstance(unit, str) and unit.strip() and len(unit) <= CARE_UNIT_MAX_LENGTH for unit in units
        ):
            raise ValidationError(
                {"care_units": f"Care units must be a list of names (each 1 to {CARE_UNIT_MAX_LENGTH} characters)."}
            )
