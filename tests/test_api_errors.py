"""Every API error is `{"error": "<code>", "detail": "<sentence>"}` (SPEC section 9)."""

import uuid

from rest_framework.test import APIClient

from sessions_app.models import Session


def assert_error(response, status: int, code: str):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error", "detail"}
    assert body["error"] == code
    assert isinstance(body["detail"], str) and body["detail"]


def test_no_api_key_is_401_with_an_api_key_challenge(db):
    response = APIClient().post("/api/v1/sessions/", {"title": "Ward 3"}, format="json")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Api-Key"
    assert not Session.objects.exists()


def test_an_unknown_api_key_is_401(db):
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Api-Key abcdefgh.not-a-real-key")
    assert_error(stranger.get("/api/v1/sessions/"), 401, "not_authenticated")


def test_a_revoked_api_key_is_401(ward_agent, api):
    ward_agent.keys.update(revoked=True)
    assert_error(api.get("/api/v1/sessions/"), 401, "not_authenticated")


def test_a_missing_object_is_404_not_found(api):
    assert_error(api.get(f"/api/v1/sessions/{uuid.uuid4()}/"), 404, "not_found")


def test_another_clients_session_is_404_not_found(api, other_api):
    session = api.post("/api/v1/sessions/", {"title": "Ward 3"}, format="json").json()
    assert_error(other_api.get(f"/api/v1/sessions/{session['id']}/"), 404, "not_found")


def test_an_unsupported_method_is_405_method_not_allowed(api):
    assert_error(api.put("/api/v1/sessions/", {}, format="json"), 405, "method_not_allowed")


def test_a_reviewer_only_endpoint_refuses_an_api_key_with_403(api):
    response = api.post(f"/api/v1/approvals/{uuid.uuid4()}/decision/", {"approved": True}, format="json")
    assert_error(response, 403, "permission_denied")


def test_an_unknown_api_path_is_a_json_404(api):
    assert_error(api.get("/api/v1/no-such-thing/"), 404, "not_found")


def test_a_malformed_id_in_the_path_is_a_json_404(api):
    assert_error(api.get("/api/v1/runs/not-a-uuid/"), 404, "not_found")


def test_pages_outside_the_api_keep_the_html_404(db):
    response = APIClient().get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_an_unexpected_failure_under_the_api_keeps_the_error_shape(api, monkeypatch):
    from django.test import Client

    from sessions_app import views

    def explode(*args, **kwargs):
        raise RuntimeError("database fell over")

    monkeypatch.setattr(views.SessionDetail, "get", explode)
    client = Client(raise_request_exception=False)
    response = client.get(
        f"/api/v1/sessions/{uuid.uuid4()}/", HTTP_AUTHORIZATION=api._credentials["HTTP_AUTHORIZATION"]
    )
    assert response.status_code == 500
    assert response.json() == {
        "error": "server_error",
        "detail": "Condor could not complete the request; nothing was changed.",
    }
