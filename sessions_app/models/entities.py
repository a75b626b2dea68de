from django.db import models


class EntityKind(models.TextChoices):
    PATIENT = "patient"
    DOCUMENT = "document"
    APPOINTMENT = "appointment"
    ENCOUNTER = "encounter"
    ORDER = "order"


class LinkedEntity(models.Model):
    """The session's current entity of one kind ("the current patient"), so the next turn need not restate it.

    Only sessions_app/entities.py `promote_latest` writes these.
    """

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="entities")
    kind = models.CharField(max_length=16, choices=EntityKind.choices)
    ref = models.CharField(max_length=200)
    label = models.CharField(max_length=200, blank=True)
    run_id = models.UUIDField()
    tool_call_id = models.CharField(max_length=120)
    linked_at = models.DateTimeField()

    class Meta:
        ordering = ["kind"]
        constraints = [
            models.UniqueConstraint(fields=["session", "kind"], name="one_linked_entity_per_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.ref}"
