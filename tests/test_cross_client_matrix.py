"""Objects of another client are 404; reviewer-only endpoints refuse API keys (SPEC section 9).

The matrix is generated from the URL conf: every /api/v1/ route with a path parameter,
every method its view serves. `ward_agent` owns the objects (tests/owned_objects.py
builds one per parameter), `other_agent` asks for them. Another client's id must answer
exactly what an id that does not exist answers, so the status cannot tell it exists.
So must the owner's own id once its session is deleted: a deleted session's runs,
approvals, stream and messages are gone for every client (SPEC section 7).
"""

import json
import uuid

import pytest
from django.urls.converters import UUIDConverter

from tests.api_routes import Route, api_routes
from tests.owned_objects import FACTORIES, build_owned, session_of

OBJECT_ROUTES = [route for route in api_routes() if route.parameters]


def _methods(route: Route) -> list[str]:
    # DRF answers HEAD with the view's GET, so HEAD must not tell more than GET does.
    return route.methods + (["head"] if route.view_class and "get" in route.methods else [])


CELLS = [(route, method) for route in OBJECT_ROUTES for method in _methods(route)]


def _cell_id(cell) -> str:
    route, method = cell
    return f"{method.upper()} {route.route}"


def send(http, method: str, url: str, **headers):
    """`{}` as the body of an unsafe method: ownership is checked before the body is."""
    if method in ("get", "head", "options"):
        response = http.generic(method.upper(), url, **headers)
    else:
        response = http.generic(method.upper(), url, "{}", content_type="application/json", **headers)
    if response.streaming:
        response.close()  # the run's live stream: its status is all this test reads
    return response


def as_reviewer(reviewer_http, method: str, url: str):
    return send(reviewer_http, method, url, HTTP_X_CSRFTOKEN=reviewer_http.cookies["csrftoken"].value)


def missing_ids(route: Route) -> dict:
    converters = route.converters
    return {
        name: uuid.uuid4() if isinstance(converters.get(name), UUIDConverter) else f"missing-{name}"
        for name in route.parameters
    }


def body(response):
    return json.loads(response.content) if response.content else None


@pytest.mark.parametrize("cell", CELLS, ids=_cell_id)
def test_another_clients_object_is_not_found(cell, api, other_api):
    route, method = cell
    owned = build_owned(api, route.parameters)

    response = send(other_api, method, route.url(**owned))
    missing = send(other_api, method, route.url(**missing_ids(route)))

    expected = 403 if route.reviewer_only else 404
    assert response.status_code == expected, response.content
    assert (response.status_code, body(response)) == (missing.status_code, body(missing))


@pytest.mark.parametrize("cell", CELLS, ids=_cell_id)
def test_the_owner_reaches_its_own_object(cell, api, reviewer_http):
    route, method = cell
    url = route.url(**build_owned(api, route.parameters))

    if route.reviewer_only:
        assert send(api, method, url).status_code == 403  # even the owner's key: reviewers decide
        response = as_reviewer(reviewer_http, method, url)
    else:
        response = send(api, method, url)

    assert response.status_code != 404, response.content


@pytest.mark.parametrize("cell", CELLS, ids=_cell_id)
def test_the_owners_object_in_a_deleted_session_is_not_found(cell, api):
    route, method = cell
    owned = build_owned(api, route.parameters)
    assert api.delete(f"/api/v1/sessions/{session_of(owned)}/").status_code == 204

    response = send(api, method, route.url(**owned))
    missing = send(api, method, route.url(**missing_ids(route)))

    expected = 403 if route.reviewer_only else 404
    assert response.status_code == expected, response.content
    assert (response.status_code, body(response)) == (missing.status_code, body(missing))


@pytest.mark.parametrize("route", [r for r in OBJECT_ROUTES if r.view_class], ids=lambda r: r.route)
def test_options_answers_alike_for_another_clients_object_and_for_none(route, api, other_api):
    # OPTIONS describes the endpoint without looking the object up: fine, as long as it stays so.
    owned = build_owned(api, route.parameters)

    response = send(other_api, "options", route.url(**owned))
    missing = send(other_api, "options", route.url(**missing_ids(route)))

    assert (response.status_code, body(response)) == (missing.status_code, body(missing))


def test_the_matrix_walks_the_object_endpoints():
    assert {
        "GET sessions/<uuid:session_id>/",
        "POST runs/<uuid:run_id>/close/",
        "GET runs/<uuid:run_id>/stream",
        "HEAD runs/<uuid:run_id>/",
        "POST runs/<uuid:run_id>/tool-calls/<tool_call_id:tool_call_id>/result/",
        "POST approvals/<uuid:approval_id>/decision/",
    } <= set(map(_cell_id, CELLS))
    assert "approvals/<uuid:approval_id>/decision/" in {route.route for route, _ in CELLS if route.reviewer_only}
    assert "approvals/<uuid:approval_id>/" not in {route.route for route, _ in CELLS if route.reviewer_only}


def test_a_parameter_without_a_factory_fails_the_matrix(api):
    assert "claim_id" not in FACTORIES
    with pytest.raises(AssertionError, match="no factory for parameter claim_id"):
        build_owned(api, ["run_id", "claim_id"])
