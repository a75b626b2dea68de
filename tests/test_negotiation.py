"""Content negotiation (condor/negotiation.py) answers as DRF's own does, whatever the Accept header."""

import pytest
from django.http import Http404
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiYamlRenderer
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from condor.negotiation import ContentNegotiation

HEADERS = [None, "*/*", " */*", "*/*;q=0.5", "application/json", "application/json; indent=2", "text/html",
           "text/html, */*", "application/xml", "*/*, application/json; indent=4", "", "application/*"]
RENDERER_LISTS = [[JSONRenderer()], [JSONRenderer(), BrowsableAPIRenderer()],
                  [OpenApiYamlRenderer(), OpenApiJsonRenderer()]]


def answer(negotiation, request, renderers):
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers)
    except NotAcceptable:
        return "406"
    except Http404:  # a ?format= no renderer has
        return "404"
    return type(renderer), media_type


@pytest.mark.parametrize("accept", HEADERS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=openapi"])
def test_the_renderer_is_drfs_choice(accept, query):
    extra = {} if accept is None else {"HTTP_ACCEPT": accept}
    for renderers in RENDERER_LISTS:
        request = Request(APIRequestFactory().get("/api/v1/runs/" + query, **extra))
        ours = answer(ContentNegotiation(), request, renderers)
        theirs = answer(DefaultContentNegotiation(), Request(APIRequestFactory().get("/api/v1/runs/" + query, **extra)),
                        renderers)
        assert ours == theirs, (accept, query, renderers)
