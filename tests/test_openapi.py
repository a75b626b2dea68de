"""The OpenAPI schema at /api/schema/ documents every /api/v1/ endpoint (SPEC section 9)."""

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.api_routes import HTTP_METHODS, api_routes
from tests.test_error_codes_documented import answered_codes


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


@pytest.mark.parametrize("route", api_routes(), ids=lambda r: r.route)
def test_every_api_path_is_documented_with_its_methods(schema, route):
    path = route.documented_path
    assert path in schema["paths"], f"{path} is missing from the schema"
    assert set(schema["paths"][path]) & HTTP_METHODS == set(route.methods)


def test_the_schema_documents_nothing_that_is_not_served(schema):
    served = {route.documented_path for route in api_routes()}
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
                assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (
                    f"{method} {path} {code}"
                )
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"error", "detail"}


def test_the_error_field_enumerates_the_stable_codes_of_condor_errors(schema):
    field = schema["components"]["schemas"]["Error"]["properties"]["error"]
    [reference] = field["allOf"]  # drf-spectacular refers to a named enum through allOf
    enum = schema["components"]["schemas"][reference["$ref"].rsplit("/", 1)[1]]
    assert enum["type"] == "string"
    assert sorted(enum["enum"]) == sorted({code for _, code in answered_codes()})


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


def test_opening_a_run_documents_that_it_supersedes_the_active_one(schema):
    operation = schema["paths"]["/api/v1/sessions/{session_id}/runs/"]["post"]
    assert "supersedes" in operation["description"] and "withdrawn" in operation["description"]
    created = operation["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert "superseded_run" in schema["components"]["schemas"][created]["required"]


def test_agent_endpoints_take_an_api_key_and_decisions_a_login(schema):
    assert schema["components"]["securitySchemes"]["ApiKeyAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": schema["components"]["securitySchemes"]["ApiKeyAuth"]["description"],
    }
    assert "Api-Key <key>" in schema["components"]["securitySchemes"]["ApiKeyAuth"]["description"]
    assert schema["paths"]["/api/v1/runs/{run_id}/tool-calls/"]["post"]["security"] == [{"ApiKeyAuth": []}]
    assert schema["paths"]["/api/v1/approvals/{approval_id}/decision/"]["post"]["security"] == [{"cookieAuth": []}]


def test_every_operation_documents_a_lost_database_and_api_key_ones_throttling(schema):
    for path, method, operation in operations(schema):
        assert "Retry-After" in operation["responses"]["503"]["headers"], f"{method} {path}"
        if {"ApiKeyAuth": []} in operation["security"] and not path.endswith("/stream"):
            assert "Retry-After" in operation["responses"]["429"]["headers"], f"{method} {path}"


# What the server does, said by the schema (issue 9, item 11); tests/test_api_fuzz.py checks the rest.


def test_an_active_run_has_no_terminal_reason_and_the_schema_allows_null(schema, api):
    session = api.post("/api/v1/sessions/", {}, format="json").json()
    run = api.post(f"/api/v1/sessions/{session['id']}/runs/", {}, format="json").json()

    assert run["terminal_reason"] is None
    assert schema["components"]["schemas"]["Run"]["properties"]["terminal_reason"]["nullable"] is True


def test_request_bodies_admit_no_field_the_server_would_refuse(schema):
    requests = {
        name: component for name, component in schema["components"]["schemas"].items() if name.endswith("Request")
    }
    assert requests
    for name, component in requests.items():
        assert component.get("additionalProperties") is False, name


def test_fields_that_must_be_objects_are_objects_in_the_schema(schema):
    components = schema["components"]["schemas"]
    for name, field in [
        ("ToolCallRequest", "args"),
        ("ToolCallRequest", "metadata"),
        ("ResumeRequest", "args"),
        ("CloseRequest", "usage"),
    ]:
        assert components[name]["properties"][field]["type"] == "object", (name, field)
    for name, field in [("ClarificationRequest", "missing"), ("ToolResultRequest", "entities")]:
        assert components[name]["properties"][field]["items"]["type"] == "object", (name, field)
    assert components["ClarificationRequest"]["properties"]["missing"]["minItems"] == 1


def test_the_session_list_documents_its_filters_as_the_server_reads_them(schema):
    operation = schema["paths"]["/api/v1/sessions/"]["get"]
    tainted = next(p for p in operation["parameters"] if p["name"] == "tainted")
    assert tainted["schema"] == {"type": "string", "enum": ["false", "true"]}
    assert "400" in operation["responses"]  # tainted=maybe


def test_the_idempotency_key_documents_its_length(schema):
    parameters = schema["paths"]["/api/v1/runs/{run_id}/resume/"]["post"]["parameters"]
    key = next(p for p in parameters if p["name"] == "Idempotency-Key")
    assert (key["schema"]["minLength"], key["schema"]["maxLength"]) == (1, 255)


def test_the_stream_schema_describes_one_server_sent_event(schema):
    content = schema["paths"]["/api/v1/runs/{run_id}/stream"]["get"]["responses"]["200"]["content"]
    event = content["text/event-stream"]["schema"]
    assert event["type"] == "object" and event["required"] == ["data"]
    assert set(event["properties"]) == {"data", "id", "event"}
