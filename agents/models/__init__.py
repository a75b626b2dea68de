from agents.models.clients import ApiClient, ApiClientKey
from agents.models.idempotency import IdempotencyRecord

__all__ = ["ApiClient", "ApiClientKey", "IdempotencyRecord"]
