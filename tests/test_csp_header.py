"""The Content-Security-Policy header, built once (condor/csp_header.py), is the one django-csp writes.

On every response, API answers included; it follows a change of the setting; and a
response a view customised (a nonce, a csp_update) still goes through django-csp.
"""

import pytest
from csp.constants import HEADER, NONCE, SELF
from csp.middleware import CSPMiddleware
from csp.utils import build_policy
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from condor.csp_header import CSPHeaderMiddleware
from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db


def django_csp_header(request, response) -> str | None:
    """What django-csp's own middleware writes on `response`."""
    middleware = CSPMiddleware(lambda request: response)
    middleware.process_request(request)
    return middleware.process_response(request, response).get(HEADER)


def test_an_api_answer_and_a_page_carry_django_csps_header(api, catalog, client):
    run_id = open_executing_run(api)
    answer = gate(api, run_id, tool="get_patient_summary", op="", args={"patient_id": "p-1"})
    page = client.get("/accounts/login/")
    missing = client.get("/api/v1/no-such-thing/")
    expected = django_csp_header(RequestFactory().get("/"), HttpResponse())
    assert expected and "frame-ancestors 'none'" in expected
    assert answer[HEADER] == page[HEADER] == missing[HEADER] == expected


def test_a_changed_setting_changes_the_header(client):
    with override_settings(CONTENT_SECURITY_POLICY={"DIRECTIVES": {"default-src": [SELF, "https://cdn.example"]}}):
        assert client.get("/accounts/login/")[HEADER] == build_policy() == "default-src 'self' https://cdn.example"
    assert "frame-ancestors 'none'" in client.get("/accounts/login/")[HEADER]


def test_a_customised_response_goes_through_django_csp():
    response = HttpResponse()
    response._csp_update = {"img-src": ["https://images.example"]}
    request = RequestFactory().get("/")
    middleware = CSPHeaderMiddleware(lambda request: response)
    middleware.process_request(request)
    header = middleware.process_response(request, response)[HEADER]
    assert "https://images.example" in header


@override_settings(CONTENT_SECURITY_POLICY={"DIRECTIVES": {"script-src": [SELF, NONCE]}})
def test_a_nonce_used_by_the_view_is_in_the_header():
    request = RequestFactory().get("/")
    middleware = CSPHeaderMiddleware(lambda request: HttpResponse())
    middleware.process_request(request)
    nonce = str(request.csp_nonce)
    assert f"'nonce-{nonce}'" in middleware.process_response(request, HttpResponse())[HEADER]
