"""The /api/v1/ routes as the URL conf declares them, for tests that must cover every endpoint.

Read from `condor.api_urls` itself (includes followed), so an endpoint added there is
walked by the schema test and the cross-client matrix without anyone listing it.
"""

import re
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver
from django.urls.resolvers import RoutePattern

from agents.auth import IsReviewer
from condor import api_urls

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")


@dataclass(frozen=True)
class Route:
    route: str  # "runs/<uuid:run_id>/close/", relative to /api/v1/
    pattern: URLPattern
    converters: dict  # every path parameter's converter, those of the includes it sits in too

    @property
    def parameters(self) -> list[str]:
        """Path parameter names, in URL order."""
        return _PARAMETER.findall(self.route)

    @property
    def documented_path(self) -> str:
        """`runs/<uuid:run_id>/` → `/api/v1/runs/{run_id}/`."""
        return "/api/v1/" + _PARAMETER.sub(r"{\1}", self.route)

    def url(self, **values) -> str:
        return "/api/v1/" + _PARAMETER.sub(lambda match: str(values[match.group(1)]), self.route)

    @property
    def view_class(self):
        return getattr(self.pattern.callback, "view_class", None) or getattr(self.pattern.callback, "cls", None)

    @property
    def methods(self) -> list[str]:
        if self.view_class is None:
            return ["get"]  # the plain async SSE view answers GET only
        return sorted(method for method in HTTP_METHODS if hasattr(self.view_class, method))

    @property
    def reviewer_only(self) -> bool:
        """Whether a logged-in reviewer is the only caller the view lets in (API keys are refused)."""
        if self.view_class is None:
            return False
        return [type(p) for p in self.view_class().get_permissions()] == [IsReviewer]


def api_routes(patterns=None, prefix: str = "", converters: dict | None = None) -> list[Route]:
    routes = []
    for entry in api_urls.urlpatterns if patterns is None else patterns:
        if not isinstance(entry.pattern, RoutePattern):
            raise TypeError(f"{entry.pattern!r}: only path() routes are walked; use path(), not re_path()")
        found = {**(converters or {}), **entry.pattern.converters}
        if isinstance(entry, URLResolver):
            routes += api_routes(entry.url_patterns, prefix + str(entry.pattern), found)
        else:
            routes.append(Route(prefix + str(entry.pattern), entry, found))
    return routes
