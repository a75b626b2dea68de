import unicodedata
import uuid

from django.core.exceptions import ValidationError
from django.db import models
from rest_framework_api_key.models import AbstractAPIKey, BaseAPIKeyManager


class ApiClient(models.Model):
    """An agent runtime calling the REST API. Owns sessions; sees only its own objects."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=120, unique=True)
    # A client that cannot park a run (no way to wait for a human) gets `blocked`
    # instead of a suspend it could never honour.
    can_park = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "approvals_apiclient"  # the table it had before the layout move
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def snapshot(self) -> dict:
        """The client as an audit row records it."""
        return {"name": self.name, "can_park": self.can_park}

    def clean(self):
        # The name is shown to reviewers on every card the client raises: it must read
        # as what it is (no control, format or line-break characters, no stray spaces).
        name = self.name or ""
        if name != name.strip() or any(unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp", "Cs"} for ch in name):
            raise ValidationError(
                {"name": "A client name may not start or end with spaces, or contain control or invisible characters."}
            )


class ApiClientKeyManager(BaseAPIKeyManager):
    def get_usable_keys(self):
        # The client rides along: every authenticated request needs it.
        return super().get_usable_keys().select_related("client")


class ApiClientKey(AbstractAPIKey):
    """A key of one client, stored hashed (djangorestframework-api-key)."""

    objects = ApiClientKeyManager()

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="keys")

    class Meta(AbstractAPIKey.Meta):
        db_table = "approvals_apiclientkey"  # the table it had before the layout move
        verbose_name = "API key"
        verbose_name_plural = "API keys"

    def snapshot(self) -> dict:
        """The key as an audit row records it: named by its prefix; the key and its hash never enter the log."""
        return {
            "client": self.client.name,
            "prefix": self.prefix,
            "name": self.name,
            "revoked": self.revoked,
            "expiry_date": self.expiry_date.isoformat() if self.expiry_date else None,
        }
