"""The Content-Security-Policy header: django-csp's, on every response, API answers included.

A view's own policy (django-csp's decorators, a nonce) is honoured through the whole middleware stack.
"""

import pytest
from csp.constants import HEADER, NONCE, SELF
from csp.decorators import csp_exempt, csp_update
from django.http import HttpResponse
from django.template import engines
from django.test import override_settings
from django.urls import path

from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy(response) -> dict[str, str]:
    """The header's directives (django-csp writes them in no fixed order)."""
    return dict(directive.partition(" ")[::2] for directive in response[HEADER].split("; "))


@csp_update({"img-src": "https://images.example"})
def with_images(request):
    return HttpResponse()


@csp_exempt()
def exempt(request):
    return HttpResponse()


def with_nonce(request):
    template = engines["django"].from_string('<script nonce="{{ request.csp_nonce }}"></script>')
    return HttpResponse(template.render(request=request))


urlpatterns = [path("images/", with_images), path("exempt/", exempt), path("nonce/", with_nonce)]


def test_an_api_answer_a_page_and_a_404_carry_the_policy(api, catalog, client):
    run_id = open_executing_run(api)
    answer = gate(api, run_id, tool="get_patient_summary", op="", args={"patient_id": "p-1"})
    page = client.get("/accounts/login/")
    missing = client.get("/api/v1/no-such-thing/")
    assert policy(answer) == policy(page) == policy(missing) == POLICY


def test_a_changed_setting_changes_the_header(client):
    with override_settings(CONTENT_SECURITY_POLICY={"DIRECTIVES": {"default-src": [SELF, "https://cdn.example"]}}):
        assert client.get("/accounts/login/")[HEADER] == "default-src 'self' https://cdn.example"
    assert policy(client.get("/accounts/login/")) == POLICY


@pytest.mark.urls(__name__)
def test_a_views_csp_update_is_added_to_its_header(client):
    assert policy(client.get("/images/")) == {**POLICY, "img-src": "'self' data: https://images.example"}


@pytest.mark.urls(__name__)
def test_a_csp_exempt_view_gets_no_header(client):
    assert HEADER not in client.get("/exempt/")


@pytest.mark.urls(__name__)
@override_settings(CONTENT_SECURITY_POLICY={"DIRECTIVES": {"script-src": [SELF, NONCE]}})
def test_a_nonce_used_by_the_view_is_in_the_header(client):
    response = client.get("/nonce/")
    nonce = response.content.decode().split('nonce="')[1].split('"')[0]
    assert policy(response) == {"default-src": "'self'", "script-src": f"'self' 'nonce-{nonce}'"}
