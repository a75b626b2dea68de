"""The API's reference pages: Swagger UI at /api/docs/, Redoc at /api/redoc/, both from this site alone.

drf-spectacular-sidecar ships both bundles as static files (settings SWAGGER_UI_DIST,
REDOC_DIST), so the pages load nothing from another site, and both live under the
site's Content-Security-Policy. Swagger UI is drf-spectacular's split view, whose
start-up script is a request of its own rather than inline; the templates move
drf-spectacular's inline page styles into static stylesheets and leave out Redoc's web
fonts; Redoc's page first loads static/api_docs/same_site_images.js, which keeps the
logo Redoc credits Redocly with from being fetched off-site. What Redoc still needs is
allowed on its page alone (below).
"""

from csp.constants import SELF
from csp.decorators import csp_update
from django.utils.decorators import method_decorator
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

# Redoc's bundle inserts two style elements that no option can give a nonce: an empty one it
# then fills through the CSSOM (its CSS-in-JS, which the CSP does not govern), and the
# scrollbar stylesheet, inserted as the bundle loads. Their hashes admit exactly those; a
# sidecar release that changes the stylesheet fails tests/live/test_api_docs.py.
EMPTY_STYLE = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
REDOC_SCROLLBAR_STYLE = "'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='"
# Redoc's search indexes the schema in a web worker it makes from a blob of its own bundle.
REDOC_SEARCH_WORKER = "blob:"


class SwaggerUI(SpectacularSwaggerSplitView):
    template_name = "api_docs/swagger_ui.html"


@method_decorator(
    csp_update({"style-src": [EMPTY_STYLE, REDOC_SCROLLBAR_STYLE], "worker-src": [SELF, REDOC_SEARCH_WORKER]}),
    name="dispatch",
)
class Redoc(SpectacularRedocView):
    template_name = "api_docs/redoc.html"
