"""POST runs/{id}/tool-calls/{tool_call_id}/result/: stored once, and tainting when untrusted (SPEC 2, 9)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.expiry import expire_due
from approvals.models import ToolCall
from audit.models import AuditEvent
from runs.models import RunEvent
from sessions_app.models import Session
from tests.helpers.approval_loop import CHART_READ, approval_row, approve, gate, resume
from tests.helpers.clock import frozen_clock
from tests.helpers.http import raw_post
from tests.helpers.personas import agent, api_for
from tests.helpers.runs import open_executing_run, run_state

SEARCH = {"query": "apixaban renal dosing"}
EMAIL = {"host": "smtp.clinic.example", "to": "gp@example.org", "body": "Discharge letter attached."}


def report(api, run_id, tool_call_id="call-1", **body):
    return api.post(
        f"/api/v1/runs/{run_id}/tool-calls/{tool_call_id}/result/", {"output": {"hits": 3}, **body}, format="json"
    )


def session_tainted(run_id) -> bool:
    return Session.objects.get(runs__id=run_id).tainted


@pytest.fixture
def searched(api):
    """An adult session whose agent just ran the untrusted web search. Returns the run id."""
    run_id = open_executing_run(api, age_band="adult")
    assert gate(api, run_id, tool="web_search", op="", args=SEARCH).json()["decision"] == "allow"
    return run_id


@pytest.fixture
def charted(api):
    """An adult session whose agent just read the chart (a trusted tool). Returns the run id."""
    run_id = open_executing_run(api, age_band="adult")
    gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ)
    return run_id


def test_a_result_is_stored(charted, api):
    response = report(
        api,
        charted,
        entities=[{"kind": "patient", "id": "p-1042"}],
        cards=[{"kind": "summary", "title": "Problems", "data": {"n": 2}}],
    )
    assert response.status_code == 200
    call = ToolCall.objects.get(tool_call_id="call-1")
    assert call.output == {"hits": 3}
    assert call.entities == [{"kind": "patient", "id": "p-1042"}]
    assert call.cards == [{"kind": "summary", "title": "Problems", "data": {"n": 2}}]
    assert call.reported_at is not None


def test_a_result_is_framed_for_the_stream(charted, api):
    report(api, charted)
    event = RunEvent.objects.get(run_id=charted, kind="tool.result")
    assert event.frames == [{"type": "tool-output-available", "toolCallId": "call-1", "output": {"hits": 3}}]


def test_an_error_result_is_framed_as_an_error(charted, api):
    report(api, charted, output={"error": "Chart service timed out."}, is_error=True)
    event = RunEvent.objects.get(run_id=charted, kind="tool.result")
    assert event.frames == [
        {"type": "tool-output-error", "toolCallId": "call-1", "errorText": "Chart service timed out."}
    ]


def test_an_untrusted_tools_result_taints_the_session(searched, api):
    response = report(api, searched)
    assert response.json()["session_tainted"] is True
    assert session_tainted(searched)


def test_a_result_marked_untrusted_taints_the_session(charted, api):
    report(api, charted, untrusted=True)
    assert session_tainted(charted)


def test_a_trusted_result_does_not_taint(charted, api):
    response = report(api, charted)
    assert response.json()["session_tainted"] is False
    assert not session_tainted(charted)


def test_tainting_is_audited_once(searched, api):
    report(api, searched)
    gate(api, searched, tool="web_search", op="", args=SEARCH, tool_call_id="call-2")
    report(api, searched, tool_call_id="call-2")
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.TAINT)
    assert (row.tool, row.data["cause"]) == ("web_search", "untrusted tool")


def test_an_untainted_adult_session_gets_the_plain_comms_rule(charted, api):
    report(api, charted)
    response = gate(api, charted, tool="send_email", op="send", args=EMAIL, tool_call_id="mail-1")
    assert response.json()["rule_id"] == "comms.approval"


def test_taint_reaches_the_next_gate_verdict(searched, api):
    report(api, searched)
    response = gate(api, searched, tool="send_email", op="send", args=EMAIL, tool_call_id="mail-1")
    assert response.status_code == 202
    assert response.json()["rule_id"] == "taint.external-approval"


def test_taint_makes_exec_need_approval_for_its_own_reason(searched, api):
    report(api, searched)
    response = gate(api, searched, tool="run_script", op="run", args={"script": "labs.py"}, tool_call_id="x-1")
    assert response.json()["rule_id"] == "taint.external-approval"


def test_a_second_result_for_the_same_call_is_refused(charted, api):
    report(api, charted)
    response = report(api, charted, output={"hits": 99})
    assert (response.status_code, response.json()["error"]) == (409, "tool_result_already_reported")
    assert ToolCall.objects.get(tool_call_id="call-1").output == {"hits": 3}


def test_an_unknown_tool_call_is_not_found(charted, api):
    response = report(api, charted, tool_call_id="never-gated")
    assert (response.status_code, response.json()["error"]) == (404, "not_found")


def test_another_clients_run_is_not_found(searched, other_api):
    response = report(other_api, searched)
    assert response.status_code == 404
    assert ToolCall.objects.get(tool_call_id="call-1").reported_at is None
    assert not session_tainted(searched)


def test_a_closed_run_takes_no_results(charted, api):
    api.post(f"/api/v1/runs/{charted}/close/", {"reason": "completed"}, format="json")
    response = report(api, charted)
    assert (response.status_code, response.json()["error"]) == (409, "run_not_active")
    assert not ToolCall.objects.get(tool_call_id="call-1").reported_at
    assert not session_tainted(charted)


@pytest.mark.parametrize(
    "fixture, body", [("searched", {}), ("charted", {"untrusted": True})], ids=["untrusted-tool", "marked-untrusted"]
)
def test_an_untrusted_result_after_its_run_ended_is_refused_but_taints_the_session(request, api, fixture, body):
    # The content reached the agent all the same; its next run in this session must not act on it untainted.
    run_id = request.getfixturevalue(fixture)
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "superseded"}, format="json")
    response = report(api, run_id, **body)
    assert (response.status_code, response.json()["error"]) == (409, "run_not_active")
    assert session_tainted(run_id)
    assert not ToolCall.objects.get(run_id=run_id, tool_call_id="call-1").reported_at
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.TAINT, run_id=run_id)
    assert row.data["cause"].endswith("reported after the run ended")


def test_a_late_result_of_a_call_that_never_ran_taints_nothing(api):
    # As while the run is active: a call Condor did not let through has no result to speak of.
    run_id = open_executing_run(api)  # unknown age: the e-mail is blocked
    gate(api, run_id, tool="send_email", op="send", args=EMAIL)
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "completed"}, format="json")
    assert report(api, run_id, untrusted=True).status_code == 409
    assert not session_tainted(run_id)


def test_a_parked_call_takes_no_result_before_its_approval_is_used(api):
    # The approval request must stay the last frame for its toolCallId until a human decided.
    run_id = open_executing_run(api)
    gate(api, run_id)
    response = report(api, run_id, output={"error": "gave up waiting"}, is_error=True)
    assert (response.status_code, response.json()["error"]) == (409, "approval_pending")
    assert not RunEvent.objects.filter(run_id=run_id, kind="tool.result").exists()


def test_a_parked_call_takes_its_result_once_resumed(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = gate(api, run_id).json()["approval"]
    approve(reviewer_http, approval["id"])
    resume(api, run_id, approval["id"])
    assert report(api, run_id, output={"prescription_id": "rx-1"}).status_code == 200


@pytest.mark.parametrize(
    "raw",
    [
        '{"output": 1, "output": 2}',
        '{"output": NaN}',
        '{"output": 9007199254740992}',
        "[1]",
        '{"output": 1, "trusted": true}',
        '{"output": 1, "untrusted": "maybe"}',
        '{"output": 1, "cards": [1]}',
    ],
    ids=["duplicate-key", "nan", "2**53", "non-object", "unknown-field", "untrusted-not-boolean", "card-not-object"],
)
def test_a_malformed_result_is_refused_and_nothing_is_stored(searched, api, raw):
    response = raw_post(api, f"/api/v1/runs/{searched}/tool-calls/call-1/result/", raw)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert ToolCall.objects.get(tool_call_id="call-1").reported_at is None
    assert not session_tainted(searched)


# --- only a call Condor let through has a result ------------------------------------------------


def assert_refused_as_not_allowed(response, run_id, tool_call_id="call-1"):
    assert (response.status_code, response.json()["error"]) == (409, "tool_call_not_allowed")
    assert ToolCall.objects.get(run_id=run_id, tool_call_id=tool_call_id).reported_at is None
    assert not RunEvent.objects.filter(run_id=run_id, kind="tool.result", data__tool_call_id=tool_call_id).exists()


def test_a_blocked_call_takes_no_result(api):
    # The default session is of unknown age, decided as a child: comms are blocked.
    run_id = open_executing_run(api)
    assert gate(api, run_id, tool="send_email", op="send", args=EMAIL).json()["decision"] == "blocked"
    assert_refused_as_not_allowed(report(api, run_id, output={"sent": True}), run_id)


def test_a_call_blocked_because_the_client_cannot_park_takes_no_result(db):
    hurried = api_for(agent("batch-agent", can_park=False))
    run_id = open_executing_run(hurried, age_band="adult")
    assert gate(hurried, run_id).json()["rule_id"] == "client.cannot-park"
    assert_refused_as_not_allowed(report(hurried, run_id, output={"prescription_id": "rx-1"}, untrusted=True), run_id)
    assert not session_tainted(run_id)


def test_a_call_whose_approval_expired_takes_no_result(api, reviewer_http, monkeypatch, settings):
    # A sibling still approved keeps the run parked (and so open to results) after call-1's deadline.
    start = frozen_clock(monkeypatch, timezone.now())
    run_id = open_executing_run(api)
    first = gate(api, run_id).json()["approval"]
    second = gate(
        api, run_id, tool="submit_billing_claim", op="submit", args={"claim_id": "c-7"}, tool_call_id="call-2"
    ).json()["approval"]
    frozen_clock(monkeypatch, start + timedelta(seconds=100))
    approve(reviewer_http, second["id"])
    expire_due(now=start + timedelta(seconds=settings.CONDOR_APPROVAL_TTL_SECONDS + 1))
    assert (approval_row(first["id"]).status, run_state(run_id)) == ("expired", ("suspended", ""))
    assert_refused_as_not_allowed(report(api, run_id, output={"prescription_id": "rx-1"}), run_id)


def test_a_call_let_through_by_its_approval_is_ledgered_as_allowed(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = gate(api, run_id).json()["approval"]
    approve(reviewer_http, approval["id"])
    assert resume(api, run_id, approval["id"]).status_code == 200
    assert report(api, run_id, output={"prescription_id": "rx-1"}).status_code == 200
    call = ToolCall.objects.get(tool_call_id="call-1")
    assert (call.decision, call.output) == ("allow", {"prescription_id": "rx-1"})


def test_a_call_run_on_a_prior_grant_takes_its_result(api, reviewer_http):
    run_id = open_executing_run(api)
    approve(reviewer_http, gate(api, run_id).json()["approval"]["id"])
    assert gate(api, run_id, tool_call_id="call-2").json()["rule_id"] == "approval.prior-grant"
    assert report(api, run_id, tool_call_id="call-2", output={"prescription_id": "rx-1"}).status_code == 200
    # The grant went to call-2: the call it was asked for never ran.
    assert_refused_as_not_allowed(report(api, run_id, output={"prescription_id": "rx-2"}), run_id)
