"""DRF's content negotiation, with the answer to "anything will do" given without parsing it, and a
?format= that no renderer has ignored rather than answered with DRF's bare 404."""

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.settings import api_settings

ANYTHING = "*/*"


class ContentNegotiation(DefaultContentNegotiation):
    """An agent's HTTP client sends `Accept: */*` (httpx, fetch, requests) or nothing: DRF then parses
    the header into media types and matches each renderer against them, to pick the first renderer,
    its own media type, on every API request. That answer, without the parsing; any
    other header, or a ?format=, is negotiated by DRF as before."""

    def select_renderer(self, request, renderers, format_suffix=None):
        # From META, not request.headers: building that mapping of every header cost more than the rest
        # of the negotiation, and nothing else on an agent's call reads it. No query string: no ?format=.
        accept = request.META.get("HTTP_ACCEPT", ANYTHING)
        if (
            accept == ANYTHING
            and not format_suffix
            and renderers
            and renderers[0].media_type != ANYTHING
            and (not request.META.get("QUERY_STRING") or api_settings.URL_FORMAT_OVERRIDE not in request.query_params)
        ):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)

    def filter_renderers(self, renderers, format):
        """The renderers of `format` (the schema's ?format=json); none has it: every one, as without it.

        DRF answers an unknown ?format= with a 404 that no endpoint documents (the schema
        fuzz sent ?format=null to the inbox's cards); a JSON API ignores a query parameter
        it does not know, as it ignores any other.
        """
        return [renderer for renderer in renderers if renderer.format == format] or renderers
