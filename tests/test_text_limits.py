"""Control characters in the text people read are refused with 400 invalid_payload, nothing stored.

A patient ref, care unit or title is one line (tab and line breaks refused too: a line break
in a patient ref later broke the escalation e-mail's subject); a reviewer's reason may run
over several lines, so tab and line breaks are allowed there and every other control is not.
"""

import pytest

from sessions_app.models import PinnedCard, Session
from tests.helpers.approval_loop import approval_row, decide, parked_run
from tests.helpers.http import post, post_json
from tests.helpers.runs import make_session

ONE_LINE_BREAKERS = ["MRN\n7", "MRN\r7", "MRN\t7", "MRN\x077", "MRN\x7f7", "MRN\x1b[31m7"]


def assert_refused(response, field):
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_payload"
    assert field in response.json()["detail"]


@pytest.mark.parametrize("field", ["patient_ref", "care_unit", "title"])
@pytest.mark.parametrize("value", ONE_LINE_BREAKERS, ids=ascii)
def test_a_session_field_with_a_control_character_is_refused(api, field, value):
    assert_refused(post(api, "/api/v1/sessions/", {field: value}), field)
    assert not Session.objects.exists()


@pytest.mark.parametrize("field", ["patient_ref", "care_unit", "title"])
def test_a_session_field_cannot_be_patched_to_hold_one(api, field):
    session = make_session(api, **{field: "Ward 3"})
    response = api.patch(f"/api/v1/sessions/{session['id']}/", {field: "Ward\n3"}, format="json")
    assert_refused(response, field)
    assert getattr(Session.objects.get(pk=session["id"]), field) == "Ward 3"


def test_a_pinned_cards_title_with_a_control_character_is_refused(api):
    session = make_session(api)
    response = post(
        api, f"/api/v1/sessions/{session['id']}/pinned-cards/", {"kind": "note", "title": "Bed\n7", "data": {}}
    )
    assert_refused(response, "title")
    assert not PinnedCard.objects.exists()


@pytest.mark.parametrize("reason", ["No\x07", "No\x1b[2J", "No\x7f"], ids=ascii)
def test_a_decision_reason_with_a_control_character_is_refused(api, catalog, reviewer_http, reason):
    _, approval = parked_run(api)
    assert_refused(decide(reviewer_http, approval["id"], {"approved": False, "reason": reason}), "reason")
    assert approval_row(approval["id"]).status == "pending"


def test_a_decision_reason_may_run_over_several_lines(api, catalog, reviewer_http):
    _, approval = parked_run(api)
    reason = "Dose too high.\n\tSee renal function:\r\n eGFR 28."
    assert decide(reviewer_http, approval["id"], {"approved": False, "reason": reason}).status_code == 200
    assert approval_row(approval["id"]).decision_reason == reason.strip()


def test_a_stop_reason_with_a_control_character_is_refused(api, catalog, reviewer_http):
    run_id, _ = parked_run(api)
    assert_refused(post_json(reviewer_http, f"/api/v1/runs/{run_id}/stop/", {"reason": "Stop\x1b"}), "reason")
    assert (
        post_json(reviewer_http, f"/api/v1/runs/{run_id}/stop/", {"reason": "Stop.\nWrong patient."}).status_code == 200
    )
