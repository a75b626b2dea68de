"""The OpenAPI schema at /api/schema/ documents every /api/v1/ endpoint (SPEC section 9)."""

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import URLPattern
from rest_framework.test import APIClient

from condor import api_urls

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


def documented_path(pattern: URLPattern) -> str:
    """`runs/<uuid:run_id>/` → `/api/v1/runs/{run_id}/`."""
    return "/api/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))


def served_methods(pattern: URLPattern) -> set[str]:
    view_class = getattr(pattern.callback, "view_class", None) or getattr(pattern.callback, "cls", None)
    if view_class is None:
        return {"get"}  # the plain async SSE view answers GET only
    return {method for method in HTTP_METHODS if hasattr(view_class, method)}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200, response.content
    return response.json()


def operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield path, method, operation


def test_the_schema_validates_without_a_single_warning():
    # Raises SchemaGenerationError on any warning, and validates against the OpenAPI 3 spec.
    call_command("spectacular", validate=True, fail_on_warn=True, stdout=StringIO(), stderr=StringIO())


def test_the_schema_is_served_without_an_api_key(schema):
    assert schema["info"]["title"] == "Condor API"


@pytest.mark.parametrize("pattern", api_urls.urlpatterns, ids=lambda p: str(p.pattern))
def test_every_api_path_is_documented_with_its_methods(schema, pattern):
    path = documented_path(pattern)
    assert path in schema["paths"], f"{path} is missing from the schema"
    assert set(schema["paths"][path]) & HTTP_METHODS == served_methods(pattern)


def test_the_schema_documents_nothing_that_is_not_served(schema):
    served = {documented_path(pattern) for pattern in api_urls.urlpatterns}
    assert set(schema["paths"]) == served


def test_operation_ids_are_unique(schema):
    ids = [operation["operationId"] for _, _, operation in operations(schema)]
    assert len(ids) == len(set(ids))


def test_every_operation_documents_a_success(schema):
    for path, method, operation in operations(schema):
        assert any(code.startswith("2") for code in operation["responses"]), f"{method} {path}"


def test_every_operation_taking_an_api_key_documents_401(schema):
    for path, method, operation in operations(schema):
        if {"ApiKeyAuth": []} in operation["security"]:
            assert "401" in operation["responses"], f"{method} {path}"


def test_the_decision_endpoint_documents_403_for_anyone_but_a_reviewer(schema):
    responses = schema["paths"]["/api/v1/approvals/{approval_id}/decision/"]["post"]["responses"]
    assert "403" in responses and "401" not in responses


def test_every_documented_error_has_the_error_shape(schema):
    for path, method, operation in operations(schema):
        for code, response in operation["responses"].items():
            if code.startswith("4"):
                assert response["content"]["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/Error"}, f"{method} {path} {code}"
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"error", "detail"}


def test_the_gate_documents_allow_and_suspend_answers(schema):
    responses = schema["paths"]["/api/v1/runs/{run_id}/tool-calls/"]["post"]["responses"]
    assert responses["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/GateVerdict")
    assert responses["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/Suspended")
    assert {"400", "404", "409"} <= set(responses)


def test_a_result_documents_why_it_can_be_refused(schema):
    responses = schema["paths"]["/api/v1/runs/{run_id}/tool-calls/{tool_call_id}/result/"]["post"]["responses"]
    for code in ("approval_pending", "tool_call_not_allowed", "tool_result_already_reported", "run_not_active"):
        assert code in responses["409"]["description"]


def test_the_gate_and_the_clarification_document_their_other_answers(schema):
    gate = schema["paths"]["/api/v1/runs/{run_id}/tool-calls/"]["post"]["responses"]
    assert "tool_call_conflict" in gate["409"]["description"]
    clarification = schema["paths"]["/api/v1/runs/{run_id}/clarifications/"]["post"]["responses"]
    assert clarification["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/GateVerdict")
    assert {"409", "410"} <= set(gate) & set(clarification)


def test_resume_documents_its_conflicts_and_expiry(schema):
    responses = schema["paths"]["/api/v1/runs/{run_id}/resume/"]["post"]["responses"]
    assert responses["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/ResumeResult")
    assert {"409", "410", "422"} <= set(responses)


def test_agent_endpoints_take_an_api_key_and_decisions_a_login(schema):
    assert schema["components"]["securitySchemes"]["ApiKeyAuth"] == {
        "type": "apiKey", "in": "header", "name": "Authorization",
        "description": schema["components"]["securitySchemes"]["ApiKeyAuth"]["description"]}
    assert "Api-Key <key>" in schema["components"]["securitySchemes"]["ApiKeyAuth"]["description"]
    assert schema["paths"]["/api/v1/runs/{run_id}/tool-calls/"]["post"]["security"] == [{"ApiKeyAuth": []}]
    assert schema["paths"]["/api/v1/approvals/{approval_id}/decision/"]["post"]["security"] == [
        {"cookieAuth": []}]


def test_every_operation_documents_a_lost_database_and_api_key_ones_throttling(schema):
    for path, method, operation in operations(schema):
        assert "Retry-After" in operation["responses"]["503"]["headers"], f"{method} {path}"
        if {"ApiKeyAuth": []} in operation["security"] and not path.endswith("/stream"):
            assert "Retry-After" in operation["responses"]["429"]["headers"], f"{method} {path}"
