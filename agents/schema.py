"""The API's two ways in, as OpenAPI security schemes: an agent's API key, a reviewer's session.

Imported from AgentsConfig.ready(), so drf-spectacular knows them before the first schema.
"""

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension

from agents.auth import IsAgent, IsReviewer
from core.schema import API_KEY_SCHEME


def _only(view, permission) -> bool:
    """Whether `permission` is the view's one and only permission class."""
    return [type(p) for p in view.get_permissions()] == [permission]


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "agents.auth.ApiKeyAuthentication"
    name = API_KEY_SCHEME

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "Agent runtimes send `Authorization: Api-Key <key>` "
            "(a key printed once by `manage.py create_api_client`).",
        }

    def get_security_requirement(self, auto_schema):
        return None if _only(auto_schema.view, IsReviewer) else {self.name: []}


class ReviewerSessionScheme(OpenApiAuthenticationExtension):
    target_class = "rest_framework.authentication.SessionAuthentication"
    name = "cookieAuth"
    priority = 1  # over drf-spectacular's own session scheme

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "cookie",
            "name": settings.SESSION_COOKIE_NAME,
            "description": "Reviewers: the Django session from /accounts/login/; "
            "unsafe methods also need the X-CSRFToken header.",
        }

    def get_security_requirement(self, auto_schema):
        return None if _only(auto_schema.view, IsAgent) else {self.name: []}
