"""Who is calling: an agent runtime (API key) or a logged-in person (Django session)."""

from dataclasses import dataclass

from rest_framework import authentication, permissions
from rest_framework.exceptions import AuthenticationFailed
from rest_framework_api_key.permissions import KeyParser

from agents import api_key_cache
from agents.models import ApiClient, ApiClientKey

REVIEWERS, COMPLIANCE, GOVERNANCE = "reviewers", "compliance", "governance"


@dataclass(frozen=True)
class ClientPrincipal:
    """request.user for an agent: authenticated, but never a Django user."""

    client: ApiClient
    is_authenticated: bool = True
    is_anonymous: bool = False
    is_staff: bool = False
    is_superuser: bool = False

    @property
    def username(self) -> str:
        return f"client:{self.client.name}"

    def has_perm(self, perm, obj=None) -> bool:
        return False


def lookup_key(raw_key: str) -> tuple[ApiClient | None, object]:
    """(client, expiry date) of a valid key from the database, (None, None) for any other."""
    try:
        key = ApiClientKey.objects.get_from_key(raw_key)
    except ApiClientKey.DoesNotExist:
        return None, None
    if key.has_expired:
        return None, None
    return key.client, key.expiry_date


def client_for_key(raw_key: str) -> ApiClient | None:
    """The client of a valid key (cached for CONDOR_API_KEY_CACHE_SECONDS, see agents/api_key_cache.py)."""
    return api_key_cache.cached_client(raw_key, lookup_key)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>` → (ClientPrincipal, ApiClient)."""

    keyword = "Api-Key"
    parser = KeyParser()

    def authenticate(self, request):
        raw_key = self.parser.get(request)
        if raw_key is None:
            return None
        client = client_for_key(raw_key)
        if client is None:
            raise AuthenticationFailed("The API key is not valid.")
        return ClientPrincipal(client), client

    def authenticate_header(self, request):
        return self.keyword


def calling_client(request) -> ApiClient | None:
    return request.auth if isinstance(request.auth, ApiClient) else None


def is_reviewer(user) -> bool:
    """A logged-in person in the reviewers group (never an API client).

    Read once per user object: a request's permission check and its visibility check
    both ask (one query, not two), and a user loaded for a request comes with the
    answer already (approvals/auth_backends.py). Django loads the user afresh for every
    request (and the inbox socket for every re-check of its session), and caches the
    user's permissions on the object the same way (ModelBackend's _perm_cache), so a
    change of groups applies from the next request on.
    """
    if not getattr(user, "is_authenticated", False) or isinstance(user, ClientPrincipal):
        return False
    try:
        return user._condor_is_reviewer
    except AttributeError:
        user._condor_is_reviewer = user.groups.filter(name=REVIEWERS).exists()
        return user._condor_is_reviewer


class IsAgent(permissions.BasePermission):
    message = "This endpoint needs an API key."

    def has_permission(self, request, view):
        return calling_client(request) is not None


class IsReviewer(permissions.BasePermission):
    message = "Only clinical reviewers, logged in, may do this."

    def has_permission(self, request, view):
        return calling_client(request) is None and is_reviewer(request.user)


class ReviewerOnly:
    """Mixin for the browser-session endpoints only logged-in reviewers use (CSRF checked).

    API keys and anonymous callers get 403: such an endpoint has no challenge to offer
    (inviting an API key would be wrong), so it sends no WWW-Authenticate header.
    """

    permission_classes = [IsReviewer]

    def get_authenticate_header(self, request):
        return None
