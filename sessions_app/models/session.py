import uuid

import pgtrigger
from django.db import models


# The policy engine's Autonomy and AgeBand (registry/policy/types.py), spelled out here because
# sessions_app comes before approvals; tests/sessions_app/test_policy_context.py holds them equal.
class AutonomyChoice(models.TextChoices):
    AUTONOMOUS = "autonomous", "Autonomous (the clinician typed the request)"
    GUARDED = "guarded", "Guarded (supervised)"
    AMBIENT = "ambient", "Ambient (supervised)"


class AgeBandChoice(models.TextChoices):
    ADULT = "adult"
    TEEN = "teen"
    CHILD = "child"
    UNKNOWN = "unknown", "Unknown (treated as child)"


class TaintCannotBeCleared(Exception):
    pass


class SessionQuerySet(models.QuerySet):
    def live(self):
        """Sessions not deleted: the only ones any client endpoint may see."""
        return self.filter(deleted_at__isnull=True)

    def locked(self):
        """These sessions, their rows locked until the transaction ends: the first lock of the order
        everywhere (session, run, approvals, the audit chain head).

        FOR NO KEY UPDATE, the lock an UPDATE of the session's other columns takes: it serialises
        the session's writers all the same. FOR UPDATE would also wait for any transaction that
        inserted a row naming the session (a parked call's approval), whose foreign key PostgreSQL
        checks at COMMIT under a KEY SHARE lock on the session; that transaction holds the run
        the locker waits for next, and each would wait for the other.
        """
        return self.select_for_update(no_key=True, of=("self",))


# The longest care_unit a session may carry (SPEC section 10): the column, the API's
# create and PATCH, and the units a review team may list all read this one number.
CARE_UNIT_MAX_LENGTH = 64


class Session(models.Model):
    """A conversation. Outlives its runs; carries the policy context of every call in it.

    Deleting a session is soft (`deleted_at`): its runs, approvals and tool calls are
    the evidence the audit log points at, so they stay for compliance while every
    client endpoint answers 404 for the session from then on.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    client = models.ForeignKey("agents.ApiClient", on_delete=models.CASCADE, related_name="sessions")
    title = models.CharField(max_length=200, blank=True)
    patient_ref = models.CharField(max_length=120, blank=True)
    # The ward that owns the patient: routes the session's cards to its review team (SPEC section 10).
    care_unit = models.CharField(max_length=CARE_UNIT_MAX_LENGTH, blank=True)
    # Fail-closed defaults: a client that says nothing is supervised, for a
    # patient of unknown age, without recorded consent.
    autonomy = models.CharField(max_length=16, choices=AutonomyChoice.choices, default=AutonomyChoice.GUARDED)
    consent = models.BooleanField(default=False)
    age_band = models.CharField(max_length=8, choices=AgeBandChoice.choices, default=AgeBandChoice.UNKNOWN)
    # Monotone: once untrusted content entered the session it stays tainted.
    # Only mark_tainted() writes it; the database refuses true → false.
    tainted = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = SessionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Owner-scoped list of live sessions, newest first (the cursor walks it).
            models.Index(
                fields=["client", "-created_at", "-id"],
                name="session_client_live",
                condition=models.Q(deleted_at__isnull=True),
            ),
        ]
        triggers = [
            pgtrigger.Protect(
                name="taint_is_monotone",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(old__tainted=True, new__tainted=False),
            ),
        ]

    def __str__(self) -> str:
        return self.title or f"Session {self.pk}"

    @classmethod
    def from_db(cls, db, field_names, values):
        instance = super().from_db(db, field_names, values)
        instance._stored_tainted = instance.__dict__.get("tainted")
        return instance

    def save(self, *args, **kwargs):
        if getattr(self, "_stored_tainted", False) and not self.tainted:
            raise TaintCannotBeCleared("A tainted session can never become untainted.")
        if not self._state.adding and not self.tainted:
            # An untainted copy never writes the column: another request may have
            # tainted the row since this copy was loaded, and its false must not
            # overwrite that (the database trigger would refuse it mid-request).
            fields = kwargs.get("update_fields")
            if fields is None:
                fields = [field.name for field in self._meta.concrete_fields if not field.primary_key]
            kwargs["update_fields"] = [name for name in fields if name != "tainted"]
        super().save(*args, **kwargs)
        self._stored_tainted = self.tainted

    def mark_tainted(self) -> bool:
        """Set the taint (idempotent). Returns True when this call tainted the session."""
        changed = Session.objects.filter(pk=self.pk, tainted=False).update(tainted=True)
        self.tainted = True
        self._stored_tainted = True
        return bool(changed)
