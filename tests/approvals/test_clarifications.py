"""POST runs/{id}/clarifications/: the agent asks; a reviewer answers a form (SPEC sections 4, 5, 9)."""

import pytest

from approvals.models import Approval
from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import approval_row, asked_run, clarify, decide, resume, suspend
from tests.helpers.http import raw_post
from tests.helpers.personas import agent, api_for
from tests.helpers.runs import open_executing_run, run_state

ROUTE = {"name": "route", "hint": {"options": ["oral", "iv"], "radio": True, "label": "Route"}}
START = {"name": "start", "type": "date", "hint": {"min": "2025-01-01", "max": "2025-12-31"}}
FORM = [
    ROUTE,
    {"name": "symptoms", "type": "array", "hint": {"options": ["rash", "fever", "nausea"], "max": 2}},
    START,
    {"name": "review_at", "type": "date-time", "hint": {"min": "2025-01-01T08:00:00Z"}},
    {"name": "history", "hint": {"textarea": True, "required": False}},
    {"name": "weight_kg", "type": "number", "hint": {"min": 0.5, "max": 350}},
    {"name": "doses", "type": "integer", "hint": {"min": 1, "max": 6}},
]
GOOD_VALUES = {
    "route": "oral",
    "symptoms": ["rash"],
    "start": "2025-03-04",
    "review_at": "2025-03-04T09:30:00Z",
    "weight_kg": 71.5,
    "doses": 3,
}


@pytest.fixture
def asked(api):
    """(run id, approval) for the full clarification form above."""
    return asked_run(api, FORM)


def properties(approval):
    return approval["resume_schema"]["properties"]


def test_a_clarification_parks_the_run(asked):
    run_id, approval = asked
    assert (approval["reason_code"], approval["status"]) == ("clarification", "pending")
    assert run_state(run_id) == ("suspended", "")


def test_a_clarification_is_framed_as_a_data_part(api):
    run_id = open_executing_run(api)
    body = clarify(api, run_id, [ROUTE], args={"drug": "amoxicillin"}).json()
    approval = body["approval"]
    assert body["reason_code"] == "clarification"
    assert body["frames"] == [
        {
            "type": "tool-input-available",
            "toolCallId": "call-1",
            "toolName": "prescribe_medication",
            "input": {"drug": "amoxicillin"},
        },
        {
            "type": "data-clarification",
            "id": approval["id"],
            "data": {
                "toolCallId": "call-1",
                "message": "Which route should the antibiotic take?",
                "schema": approval["resume_schema"],
            },
        },
    ]


def test_options_become_a_single_select_with_a_radio_flag(asked):
    _, approval = asked
    assert properties(approval)["route"] == {
        "title": "Route",
        "type": "string",
        "enum": ["oral", "iv"],
        "x-condor-widget": "radio",
    }


def test_an_array_becomes_a_multi_choice(asked):
    _, approval = asked
    assert properties(approval)["symptoms"] == {
        "title": "symptoms",
        "type": "array",
        "items": {"type": "string", "enum": ["rash", "fever", "nausea"]},
        "uniqueItems": True,
        "maxItems": 2,
    }


def test_dates_carry_their_bounds(asked):
    _, approval = asked
    assert properties(approval)["start"] == {
        "title": "start",
        "type": "string",
        "format": "date",
        "formatMinimum": "2025-01-01",
        "formatMaximum": "2025-12-31",
    }
    assert properties(approval)["review_at"]["format"] == "date-time"
    assert properties(approval)["review_at"]["formatMinimum"] == "2025-01-01T08:00:00Z"


def test_a_textarea_flag_and_number_bounds_reach_the_schema(asked):
    _, approval = asked
    assert properties(approval)["history"] == {"title": "history", "type": "string", "x-condor-widget": "textarea"}
    assert properties(approval)["weight_kg"] == {"title": "weight_kg", "type": "number", "minimum": 0.5, "maximum": 350}
    assert properties(approval)["doses"] == {"title": "doses", "type": "integer", "minimum": 1, "maximum": 6}
    assert "history" not in approval["resume_schema"]["required"]


@pytest.mark.parametrize(
    "hint",
    [
        {"options": "oral,iv"},
        {"options": ["oral", "oral"]},
        {"min": "2025-12-31", "max": "2025-01-01"},
        {"radio": "yes", "options": ["oral"]},
        {"textarea": True, "format": "date"},
        {"colour": "red"},
        "oral",
    ],
    ids=[
        "options-not-a-list",
        "duplicate-options",
        "min-after-max",
        "radio-not-boolean",
        "textarea-on-date",
        "unknown-key",
        "hint-not-an-object",
    ],
)
def test_a_malformed_hint_degrades_only_its_field_to_free_text(api, hint):
    run_id = open_executing_run(api)
    response = clarify(api, run_id, [{"name": "route", "type": "date", "hint": hint}, ROUTE | {"name": "r2"}])
    assert response.status_code == 202
    fields = properties(response.json()["approval"])
    assert fields["route"] == {"title": "route", "type": "string", "minLength": 1}
    assert fields["r2"]["enum"] == ["oral", "iv"]


@pytest.mark.parametrize(
    "missing",
    [[], [{"name": "route"}, {"name": "route"}], [{"name": ""}], [{"hint": {}}], "route"],
    ids=["empty", "duplicate-names", "blank-name", "no-name", "not-a-list"],
)
def test_an_unusable_field_list_is_refused_and_nothing_is_stored(api, missing):
    run_id = open_executing_run(api)
    response = clarify(api, run_id, missing)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert not Approval.objects.exists()
    assert run_state(run_id) == ("executing", "")


HEAD = '"tool_call_id": "c", "step_id": "s", "tool": "t"'


@pytest.mark.parametrize(
    "raw",
    [
        "{" + HEAD + ', "message": "m", "missing": [{"name": "a"}], "message": "n"}',
        "{" + HEAD + ', "message": "m", "missing": [{"name": "a", "hint": {"max": NaN}}]}',
        "{" + HEAD + ', "message": "m", "missing": [{"name": "a"}], "args": {"n": 9007199254740992}}',
        "{" + HEAD + ', "message": "m", "missing": [{"name": "a"}], "urgent": true}',
        "{" + HEAD + ', "missing": [{"name": "a"}]}',
        '[{"name": "a"}]',
    ],
    ids=["duplicate-key", "nan", "2**53", "unknown-field", "no-message", "non-object"],
)
def test_a_malformed_clarification_body_is_refused(api, raw):
    run_id = open_executing_run(api)
    response = raw_post(api, f"/api/v1/runs/{run_id}/clarifications/", raw)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert not Approval.objects.exists()


def test_a_pending_run_cannot_ask(api):
    session = api.post("/api/v1/sessions/", {}, format="json").json()
    run_id = api.post(f"/api/v1/sessions/{session['id']}/runs/", {}, format="json").json()["id"]
    assert clarify(api, run_id, [ROUTE]).json()["error"] == "run_not_active"


def test_another_clients_run_is_not_found(api, other_api):
    run_id = open_executing_run(api)
    assert clarify(other_api, run_id, [ROUTE]).status_code == 404
    assert not Approval.objects.exists()


# --- answering -----------------------------------------------------------------------------------


def test_good_values_are_returned_on_resume(asked, api, reviewer_http):
    run_id, approval = asked
    decided = decide(reviewer_http, approval["id"], {"values": GOOD_VALUES})
    assert decided.status_code == 200, decided.content
    response = resume(api, run_id, approval["id"])
    assert response.status_code == 200
    assert response.json()["values"] == GOOD_VALUES
    assert run_state(run_id) == ("executing", "")


@pytest.mark.parametrize(
    "values",
    [
        {**GOOD_VALUES, "route": "rectal"},
        {**GOOD_VALUES, "symptoms": ["rash", "fever", "nausea"]},
        {**GOOD_VALUES, "symptoms": ["rash", "rash"]},
        {**GOOD_VALUES, "start": "2026-01-01"},
        {**GOOD_VALUES, "start": "04/03/2025"},
        {**GOOD_VALUES, "review_at": "2024-12-31T23:00:00Z"},
        {**GOOD_VALUES, "weight_kg": 0},
        {**GOOD_VALUES, "doses": 2.5},
        {**GOOD_VALUES, "pharmacy": "main"},
        {key: value for key, value in GOOD_VALUES.items() if key != "route"},
    ],
    ids=[
        "not-an-option",
        "too-many-choices",
        "repeated-choice",
        "date-after-max",
        "not-a-date",
        "before-min",
        "below-minimum",
        "not-an-integer",
        "unknown-field",
        "required-missing",
    ],
)
def test_values_the_form_refuses_fail_the_run(asked, reviewer_http, api, values):
    run_id, approval = asked
    response = decide(reviewer_http, approval["id"], {"values": values})
    assert (response.status_code, response.json()["error"]) == (422, "resume_schema_rejected")
    assert run_state(run_id) == ("failed", "resume_schema_rejected")
    assert resume(api, run_id, approval["id"]).json()["error"] == "approval_rejected"


@pytest.mark.parametrize("body", [{"approved": True}, {"values": GOOD_VALUES, "approved": True}, {"values": ["oral"]}])
def test_a_clarification_is_answered_with_values_only(asked, reviewer_http, body):
    run_id, approval = asked
    assert decide(reviewer_http, approval["id"], body).status_code == 422
    assert approval_row(approval["id"]).status == "rejected"
    assert run_state(run_id) == ("failed", "resume_schema_rejected")


def test_a_clarification_after_an_approval_is_answered_separately(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    clarification = clarify(api, run_id, [ROUTE]).json()["approval"]
    decide(reviewer_http, approval["id"], {"approved": True})
    decide(reviewer_http, clarification["id"], {"values": {"route": "iv"}})
    assert resume(api, run_id, approval["id"]).json()["run"]["state"] == "suspended"
    last = resume(api, run_id, clarification["id"])
    assert (last.json()["values"], last.json()["run"]["state"]) == ({"route": "iv"}, "executing")


def test_values_the_form_refuses_deny_the_tool_call_on_the_stream(asked, reviewer_http):
    # The stream must not end on the form: the call is denied, then the run is closed.
    run_id, approval = asked
    decide(reviewer_http, approval["id"], {"values": {**GOOD_VALUES, "route": "rectal"}})
    chunks = [chunk for event in RunEvent.objects.filter(run_id=run_id) for chunk in event.frames]
    assert [chunk["type"] for chunk in chunks] == [
        "tool-input-available",
        "data-clarification",
        "data-approval-decision",
        "tool-output-denied",
    ]
    assert chunks[-1] == {"type": "tool-output-denied", "toolCallId": "call-1"}
    assert RunEvent.objects.filter(run_id=run_id).last().kind == "run.closed"


# --- clients that cannot park (SPEC section 4) ---------------------------------------------------


@pytest.fixture
def hurried_api(db):
    """`create_api_client --cannot-park`: an agent with no way to wait for a human."""
    return api_for(agent("batch-agent", can_park=False))


def test_a_client_that_cannot_park_is_blocked_instead_of_asked(hurried_api):
    run_id = open_executing_run(hurried_api)
    response = clarify(hurried_api, run_id, [ROUTE])
    assert response.status_code == 200
    assert (response.json()["decision"], response.json()["rule_id"]) == ("blocked", "client.cannot-park")
    assert not Approval.objects.exists()
    assert run_state(run_id) == ("executing", "")
    verdict = AuditEvent.objects.get(kind=AuditEvent.Kind.VERDICT, run_id=run_id)
    assert (verdict.decision, verdict.rule_id, verdict.tool) == (
        "blocked",
        "client.cannot-park",
        "prescribe_medication",
    )


def test_an_unusable_form_from_a_client_that_cannot_park_is_still_refused(hurried_api):
    run_id = open_executing_run(hurried_api)
    response = clarify(hurried_api, run_id, [{"name": "route"}, {"name": "route"}])
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.VERDICT).exists()
