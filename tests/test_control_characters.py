"""A control character in a path or query parameter is 400 before any view reads it (SPEC section 9):
the API with its JSON error, the inbox and the admin with Django's plain 400 page. PostgreSQL refuses
a NUL as a lookup value, so each of these was a 500 (DataError)."""

import pytest

from tests.governance.test_admin import admin_client
from tests.helpers.approval_loop import parked_run
from tests.helpers.personas import logged_in
from tests.helpers.runs import make_session


def assert_json_refusal(response):
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "invalid_payload"
    assert "control character" in response.json()["detail"]


def assert_plain_refusal(response):
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("character", ["%00", "%01", "%0A", "%1F", "%7F"])
def test_a_control_character_in_an_api_path_is_400(api, character):
    session = make_session(api)
    assert_json_refusal(api.get(f"/api/v1/sessions/{session['id']}/messages/{character}/"))


def test_a_nul_in_a_reviewers_query_parameter_is_400(reviewer_http):
    assert_json_refusal(reviewer_http.get("/api/v1/inbox/decided/?patient_ref=%00"))


def test_a_nul_in_a_query_parameters_name_is_400(api):
    assert_json_refusal(api.get("/api/v1/sessions/?%00=1"))


@pytest.mark.parametrize(
    "url",
    [
        "/admin/audit/auditevent/?patient_ref=%00",
        "/admin/audit/auditevent/?tool=%00",
        "/admin/approvals/approval/?status__exact=%00",
        "/admin/sessions_app/session/?care_unit=%00",
        "/admin/audit/auditevent/?q=a%0Db",
    ],
    ids=str,
)
def test_a_control_character_in_an_admin_query_is_a_plain_400_page(carl, url):
    assert_plain_refusal(admin_client(carl).get(url))


def test_the_inbox_page_answers_a_plain_400_page(rita):
    assert_plain_refusal(logged_in(rita).get("/inbox/?patient_ref=%00"))


def test_ordinary_paths_and_queries_pass(api, carl, catalog):
    parked_run(api)
    assert api.get("/api/v1/sessions/?limit=5").status_code == 200
    assert admin_client(carl).get("/admin/approvals/approval/?status__exact=pending").status_code == 200
    assert admin_client(carl).get("/admin/audit/auditevent/?patient_ref=MRN%207").status_code == 200
