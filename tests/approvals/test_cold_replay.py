"""Cold replay (SPEC section 4): an approved, unused grant in the session lets the same call run once."""

import pytest

from audit.models import AuditEvent
from tests.helpers.approval_loop import PRESCRIPTION, approval_row, approve, clarify, decide, gate, resume, suspend
from tests.helpers.clock import frozen_clock, later
from tests.helpers.runs import open_executing_run, run_state


def open_next_run(api, run_id) -> str:
    """Open a new run in `run_id`'s session (superseding it) and set it executing."""
    session_id = api.get(f"/api/v1/runs/{run_id}/").json()["session"]
    new_run = api.post(f"/api/v1/sessions/{session_id}/runs/", {}, format="json").json()["id"]
    api.post(f"/api/v1/runs/{new_run}/transition/", {"to": "executing"}, format="json")
    return new_run


@pytest.fixture
def granted(api, reviewer_http):
    """An approval granted on run 1, then run 1 superseded by run 2. Returns (run 2 id, approval)."""
    first_run = open_executing_run(api)
    approval = suspend(api, first_run)
    approve(reviewer_http, approval["id"])
    second_run = open_next_run(api, first_run)
    assert run_state(first_run) == ("aborted", "superseded")
    return second_run, approval


def test_the_same_call_on_the_next_run_runs_on_the_prior_grant(granted, api):
    run_id, approval = granted
    response = gate(api, run_id, tool_call_id="call-9")
    assert response.status_code == 200
    assert (response.json()["decision"], response.json()["rule_id"]) == ("allow", "approval.prior-grant")
    assert response.json()["args"] == PRESCRIPTION
    assert approval_row(approval["id"]).status == "consumed"
    assert run_state(run_id) == ("executing", "")


def test_a_prior_grant_is_audited_as_verdict_and_consume(granted, api):
    run_id, approval = granted
    gate(api, run_id, tool_call_id="call-9")
    verdict = AuditEvent.objects.get(kind=AuditEvent.Kind.VERDICT, run_id=run_id)
    assert (verdict.decision, verdict.rule_id) == ("allow", "approval.prior-grant")
    consume = AuditEvent.objects.get(kind=AuditEvent.Kind.CONSUME)
    assert str(consume.approval_id) == approval["id"]


def test_the_grant_matches_by_canonical_hash(granted, api):
    run_id, _ = granted
    reordered = dict(reversed(list(PRESCRIPTION.items())))
    assert gate(api, run_id, args=reordered, tool_call_id="call-9").json()["rule_id"] == "approval.prior-grant"


def test_other_args_do_not_match_the_grant_and_suspend(granted, api):
    run_id, approval = granted
    response = gate(api, run_id, args={**PRESCRIPTION, "dose": "1 g"}, tool_call_id="call-9")
    assert response.status_code == 202
    assert approval_row(approval["id"]).status == "approved"


def test_another_tool_with_the_same_args_does_not_match(granted, api):
    run_id, _ = granted
    response = gate(api, run_id, tool="change_medication", op="update", tool_call_id="call-9")
    assert response.status_code == 202


def test_a_grant_runs_only_once(granted, api):
    run_id, _ = granted
    gate(api, run_id, tool_call_id="call-9")
    assert gate(api, run_id, tool_call_id="call-10", step_id="step-2").status_code == 202


def test_a_consumed_grant_cannot_then_be_resumed(granted, api):
    run_id, approval = granted
    gate(api, run_id, tool_call_id="call-9")
    assert resume(api, approval["run"], approval["id"]).json()["error"] == "approval_consumed"


def test_an_expired_grant_is_not_honoured(granted, api, monkeypatch, settings):
    run_id, approval = granted
    frozen_clock(monkeypatch, later(settings.CONDOR_APPROVAL_TTL_SECONDS + 1))
    assert gate(api, run_id, tool_call_id="call-9").status_code == 202
    assert approval_row(approval["id"]).status == "approved"


def test_a_grant_in_another_session_is_not_honoured(granted, api):
    fresh_run = open_executing_run(api)
    assert gate(api, fresh_run, tool_call_id="call-9").status_code == 202


def test_an_undecided_approval_is_not_a_grant(api):
    first_run = open_executing_run(api)
    approval = suspend(api, first_run)
    second_run = open_next_run(api, first_run)
    assert approval_row(approval["id"]).status == "withdrawn"  # superseding withdraws pending approvals
    assert gate(api, second_run, tool_call_id="call-9").status_code == 202


def test_an_edited_grant_matches_the_approved_args_only(api, reviewer_http):
    edited = {**PRESCRIPTION, "dose": "250 mg"}
    first_run = open_executing_run(api)
    approve(reviewer_http, suspend(api, first_run)["id"], edited_args=edited)
    second_run = open_next_run(api, first_run)
    assert gate(api, second_run, args=edited, tool_call_id="call-9").json()["rule_id"] == "approval.prior-grant"


def test_a_client_that_cannot_park_may_still_use_a_grant(granted, api, ward_agent):
    ward_agent.can_park = False
    ward_agent.save()
    run_id, _ = granted
    assert gate(api, run_id, tool_call_id="call-9").json()["rule_id"] == "approval.prior-grant"


def test_replaying_on_the_parked_run_itself_unparks_it(api, reviewer_http):
    # An agent that lost its place re-sends the call instead of resuming; the grant
    # is used up, so a run left suspended could never be resumed again.
    run_id = open_executing_run(api)
    approve(reviewer_http, suspend(api, run_id)["id"])
    response = gate(api, run_id, tool_call_id="call-1")
    assert response.json()["rule_id"] == "approval.prior-grant"
    assert run_state(run_id) == ("executing", "")


def test_an_answered_clarification_is_not_a_grant(api, reviewer_http):
    # The reviewer answered a question about the call; nobody approved running it.
    first_run = open_executing_run(api)
    asked = clarify(api, first_run, [{"name": "route"}], op="create").json()["approval"]
    assert decide(reviewer_http, asked["id"], {"values": {"route": "oral"}}).status_code == 200
    assert approval_row(asked["id"]).status == "approved"
    second_run = open_next_run(api, first_run)
    response = gate(api, second_run, tool_call_id="call-9")
    assert (response.status_code, response.json()["rule_id"]) == (202, "mutate.high-tier-always-approval")
    assert approval_row(asked["id"]).status == "approved"


def test_a_grant_for_one_op_does_not_allow_another_op_with_the_same_args(granted, api):
    run_id, approval = granted
    response = gate(api, run_id, op="delete", tool_call_id="call-9")
    assert response.status_code == 202
    assert response.json()["approval"]["op"] == "delete"
    assert approval_row(approval["id"]).status == "approved"
