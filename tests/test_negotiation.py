"""Content negotiation (core/negotiation.py) answers as DRF's own does, whatever the Accept header, but for
a ?format= that no renderer has: it is ignored (DRF: an undocumented 404)."""

from urllib.parse import parse_qsl, urlencode

import pytest
from django.http import Http404
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiYamlRenderer
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from core.negotiation import ContentNegotiation

HEADERS = [
    None,
    "*/*",
    " */*",
    "*/*;q=0.5",
    "application/json",
    "application/json; indent=2",
    "text/html",
    "text/html, */*",
    "application/xml",
    "*/*, application/json; indent=4",
    "",
    "application/*",
]
RENDERER_LISTS = [
    [JSONRenderer()],
    [JSONRenderer(), BrowsableAPIRenderer()],
    [OpenApiYamlRenderer(), OpenApiJsonRenderer()],
]


def answer(negotiation, request, renderers):
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers)
    except NotAcceptable:
        return "406"
    return type(renderer), media_type


def get(query: str, extra: dict) -> Request:
    return Request(APIRequestFactory().get("/api/v1/runs/" + query, **extra))


def _as_drf_would_see(query: str, renderers) -> str:
    """`query` with a ?format= that no renderer has left out: what ours answers as if it were not there."""
    params = parse_qsl(query.removeprefix("?"))
    formats = {renderer.format for renderer in renderers}
    kept = [(name, value) for name, value in params if name != "format" or value in formats]
    return f"?{urlencode(kept)}" if kept else ""


@pytest.mark.parametrize("accept", HEADERS)
@pytest.mark.parametrize(
    "query", ["", "?format=json", "?format=openapi", "?format=null", "?limit=5", "?limit=5&format=json"]
)
def test_the_renderer_is_drfs_choice(accept, query):
    extra = {} if accept is None else {"HTTP_ACCEPT": accept}
    for renderers in RENDERER_LISTS:
        ours = answer(ContentNegotiation(), get(query, extra), renderers)
        theirs = answer(DefaultContentNegotiation(), get(_as_drf_would_see(query, renderers), extra), renderers)
        assert ours == theirs, (accept, query, renderers)


def test_drf_alone_would_answer_an_unknown_format_with_a_404():
    with pytest.raises(Http404):
        DefaultContentNegotiation().select_renderer(get("?format=null", {}), [JSONRenderer()])


@pytest.mark.django_db
def test_an_unknown_format_is_answered_as_without_it(api, reviewer_http):
    from tests.helpers.runs import make_run

    run = make_run(api, "executing")
    assert api.get(f"/api/v1/runs/{run['id']}/?format=null").json()["id"] == run["id"]
    assert reviewer_http.get("/api/v1/inbox/cards/?format=null").status_code == 200
