"""An agent's API call passes over the session, auth and messages middleware; every other request keeps them."""

import asyncio

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from core.browser_middleware import AuthenticationMiddleware, MessageMiddleware, SessionMiddleware

KEY = {"HTTP_AUTHORIZATION": "Api-Key abc.def"}


def _chain(seen: dict):
    """The three in settings order around a view that notes what the request carried."""

    def view(request):
        seen.update(
            session=hasattr(request, "session"), user=hasattr(request, "user"), messages=hasattr(request, "_messages")
        )
        return HttpResponse("ok")

    return SessionMiddleware(AuthenticationMiddleware(MessageMiddleware(view)))


@pytest.mark.parametrize("path", ["/api/v1/runs/", "/api/schema/"])
def test_an_agents_call_skips_them(path):
    seen = {}
    response = _chain(seen)(RequestFactory().get(path, **KEY))
    assert response.status_code == 200
    assert seen == {"session": False, "user": False, "messages": False}


@pytest.mark.parametrize(
    "path, headers",
    [
        ("/api/v1/runs/", {**KEY, "HTTP_COOKIE": "sessionid=x"}),  # any cookie: a browser may be signed in
        ("/api/v1/runs/", {}),  # no key: a reviewer's call, signed in by session
        ("/api/v1/runs/", {"HTTP_AUTHORIZATION": "Bearer abc"}),  # not an API key
        ("/admin/login/", KEY),  # outside /api/: the admin's and the inbox's pages need their session
        ("/inbox/", KEY),
    ],
)
def test_every_other_request_goes_through_them(path, headers):
    seen = {}
    _chain(seen)(RequestFactory().get(path, **headers))
    assert seen == {"session": True, "user": True, "messages": True}


def test_under_asgi_the_skip_still_awaits_the_view():
    seen = {}

    async def view(request):
        seen["session"] = hasattr(request, "session")
        return HttpResponse("ok")

    middleware = SessionMiddleware(view)
    response = asyncio.run(middleware(RequestFactory().get("/api/v1/runs/", **KEY)))
    assert response.status_code == 200 and seen == {"session": False}


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_a_login_page_with_an_api_key_and_no_cookie_still_renders(client, path):
    # These pages use the session and messages: a request shaped like an agent's must not reach them bare.
    response = client.get(path, **KEY)
    assert response.status_code == 200


def test_an_agents_call_through_the_test_client_works_without_them(api, run_id):
    response = api.get(f"/api/v1/runs/{run_id}/")
    assert response.status_code == 200
    assert "Cookie" not in response.get("Vary", "")
    assert not response.cookies
