import uuid

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
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ApiClientKeyManager(BaseAPIKeyManager):
    def get_usable_keys(self):
        # The client rides along: every authenticated request needs it.
        return super().get_usable_keys().select_related("client")


class ApiClientKey(AbstractAPIKey):
    """A key of one client, stored hashed (djangorestframework-api-key)."""

    objects = ApiClientKeyManager()

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="keys")

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "API key"
        verbose_name_plural = "API keys"
