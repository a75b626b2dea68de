"""A NUL character (U+0000) anywhere in a body is 400 invalid_payload, not a 500 (issue 9, item 3).

PostgreSQL stores U+0000 neither in text nor in jsonb; the strict JSON parser refuses
it in keys and values at any depth, before any service runs.
"""

import pytest

from approvals.models import Approval, ToolCall
from runs.models import Run
from sessions_app.models import Session
from tests.helpers.approval_loop import PRESCRIPTION, approval_row, assert_nothing_gated, gate, raw_gate, suspend
from tests.helpers.approval_loop import decide as post_decision
from tests.helpers.http import raw_post

NUL = r"\u0000"  # as it travels: a JSON escape (a raw NUL byte is not valid JSON at all)


def assert_refused_for_nul(response):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid_payload"
    assert "NUL" in body["detail"]


@pytest.mark.parametrize(
    "body",
    [
        f'{{"title": "Ward{NUL}3"}}',
        f'{{"title": "Ward 3", "patient_ref": "MRN{NUL}"}}',
        f'{{"tit{NUL}le": "Ward 3"}}',
    ],
)
def test_a_session_with_a_nul_is_refused(api, body):
    assert_refused_for_nul(raw_post(api, "/api/v1/sessions/", body))
    assert not Session.objects.exists()


@pytest.mark.parametrize(
    "field",
    [
        f'"args": {{"drug": "amoxicillin{NUL}"}}',
        f'"args": {{"dose": {{"unit": ["mg", "{NUL}"]}}}}',
        f'"args": {{"dr{NUL}ug": "amoxicillin"}}',
        f'"args": {{}}, "metadata": {{"plan": "auto{NUL}"}}',
        f'"args": {{}}, "metadata": {{"nested": [{{"{NUL}": 1}}]}}',
    ],
)
def test_a_tool_call_with_a_nul_anywhere_is_refused_before_the_gate(api, run_id, field):
    assert_refused_for_nul(raw_gate(api, run_id, field))
    assert_nothing_gated()


def test_a_clarification_with_a_nul_is_refused(api, run_id):
    body = (
        '{"tool_call_id": "call-1", "step_id": "step-1", "tool": "prescribe_medication", '
        f'"message": "Which route?{NUL}", "missing": [{{"name": "route"}}]}}'
    )
    assert_refused_for_nul(raw_post(api, f"/api/v1/runs/{run_id}/clarifications/", body))
    assert not Approval.objects.exists()


def test_a_tool_result_with_a_nul_is_refused(api, run_id):
    assert gate(api, run_id, tool="search_patients", op="", args={"name": "Ada"}).status_code == 200
    body = f'{{"output": {{"rows": ["Ada{NUL}"]}}}}'
    assert_refused_for_nul(raw_post(api, f"/api/v1/runs/{run_id}/tool-calls/call-1/result/", body))
    assert ToolCall.objects.get().reported_at is None


def test_close_with_a_nul_in_usage_is_refused(api, run_id):
    body = f'{{"reason": "completed", "usage": {{"model": "m{NUL}"}}}}'
    assert_refused_for_nul(raw_post(api, f"/api/v1/runs/{run_id}/close/", body))
    assert Run.objects.get(pk=run_id).state == "executing"


def test_resume_with_a_nul_in_args_is_refused(api, run_id):
    approval = suspend(api, run_id)
    body = f'{{"approval_id": "{approval["id"]}", "args": {{"drug": "amoxicillin{NUL}"}}}}'
    assert_refused_for_nul(raw_post(api, f"/api/v1/runs/{run_id}/resume/", body))


@pytest.mark.parametrize(
    "decision",
    [
        f'{{"approved": false, "reason": "Wrong{NUL} patient"}}',
        f'{{"approved": true, "edited_args": {{"drug": "amoxicillin", "dose": "250 mg{NUL}"}}}}',
        f'{{"approved": true, "edited_args": {{"{NUL}": 1}}}}',
    ],
)
def test_a_reviewers_decision_with_a_nul_is_refused_and_the_approval_stays_pending(
    api, run_id, reviewer_http, decision
):
    approval = suspend(api, run_id)
    assert_refused_for_nul(post_decision(reviewer_http, approval["id"], decision))
    row = approval_row(approval["id"])
    assert (row.status, row.approved_args) == ("pending", None)


def test_clarification_values_with_a_nul_are_refused(api, run_id, reviewer_http):
    response = api.post(
        f"/api/v1/runs/{run_id}/clarifications/",
        {
            "tool_call_id": "call-1",
            "step_id": "step-1",
            "tool": "prescribe_medication",
            "args": PRESCRIPTION,
            "message": "Which route?",
            "missing": [{"name": "route"}],
        },
        format="json",
    )
    assert response.status_code == 202, response.content
    approval = response.json()["approval"]
    assert_refused_for_nul(post_decision(reviewer_http, approval["id"], f'{{"values": {{"route": "oral{NUL}"}}}}'))
    assert approval_row(approval["id"]).status == "pending"


def test_an_escaped_backslash_before_u0000_is_ordinary_text(api):
    # "\\u0000" in JSON is a backslash followed by "u0000": storable, so accepted.
    response = raw_post(api, "/api/v1/sessions/", r'{"title": "Ward \\u0000"}')
    assert response.status_code == 201, response.content
    assert Session.objects.get().title == "Ward \\u0000"
