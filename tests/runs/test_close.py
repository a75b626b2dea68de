"""Closing runs: 13 reasons onto 3 terminal states, idempotent, and nothing moves afterwards."""

from datetime import timedelta

import pytest

from approvals.models import Approval
from audit.models import AuditEvent
from runs.models import Run, RunEvent
from tests.helpers.approval_loop import decide, park, resume
from tests.helpers.clock import frozen_clock
from tests.helpers.http import error_of, post
from tests.helpers.runs import close, event_kinds, make_run, stored_state, transition

# SPEC section 3, written out here rather than imported, so the test checks the code's table.
TERMINAL_STATE_OF = {
    "completed": "completed",
    "direct_answer": "completed",
    "error": "failed",
    "degraded_partial": "failed",
    "tool_error": "failed",
    "resume_schema_rejected": "failed",
    "timeout": "failed",
    "approval_denied": "aborted",
    "user_stopped": "aborted",
    "sweep_idle": "aborted",
    "sweep_suspend_ttl": "aborted",
    "approval_expired": "aborted",
    "superseded": "aborted",
}


def test_the_spec_names_thirteen_reasons():
    assert len(TERMINAL_STATE_OF) == 13
    assert {choice for choice, _ in Run._meta.get_field("terminal_reason").choices} == set(TERMINAL_STATE_OF)


@pytest.mark.parametrize("reason, state", sorted(TERMINAL_STATE_OF.items()))
def test_each_reason_closes_the_run_in_its_terminal_state(api, reason, state):
    run = make_run(api, "executing")

    response = close(api, run["id"], reason)

    assert response.status_code == 200, response.json()
    assert (response.json()["state"], response.json()["terminal_reason"]) == (state, reason)
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason) == (state, reason)


@pytest.mark.parametrize("reason", ["finished", "", "COMPLETED", None])
def test_close_with_an_unknown_reason_is_400_and_changes_nothing(api, reason):
    run = make_run(api, "executing")

    response = close(api, run["id"], reason)

    assert error_of(response) == (400, "invalid_payload")
    assert stored_state(run["id"]) == "executing"
    assert "run.closed" not in event_kinds(run["id"])


def test_close_without_a_reason_is_400(api):
    run = make_run(api, "executing")

    response = post(api, f"/api/v1/runs/{run['id']}/close/", {"summary": "done"})

    assert response.status_code == 400
    assert stored_state(run["id"]) == "executing"


def test_second_close_returns_the_run_unchanged(api):
    run = make_run(api, "executing")
    first = close(api, run["id"], "completed", summary="Prescribed.").json()

    again = close(api, run["id"], "user_stopped", summary="Something else.")

    assert again.status_code == 200
    assert again.json() == first
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason, stored.summary) == ("completed", "completed", "Prescribed.")
    assert event_kinds(run["id"]).count("run.closed") == 1


def test_close_stores_summary_and_usage(api):
    run = make_run(api, "executing")

    closed = close(
        api,
        run["id"],
        "direct_answer",
        summary="Answered from the chart.",
        usage={"input_tokens": 812, "output_tokens": 96},
    ).json()

    assert closed["summary"] == "Answered from the chart."
    assert closed["usage"] == {"input_tokens": 812, "output_tokens": 96}


def test_close_writes_its_event_and_an_audit_entry(api, ward_agent):
    run = make_run(api, "executing")

    close(api, run["id"], "timeout")

    event = RunEvent.objects.get(run_id=run["id"], kind="run.closed")
    assert event.data == {"state": "failed", "terminal_reason": "timeout", "terminal": True}
    audit = AuditEvent.objects.get(run_id=run["id"], kind="run_close")
    assert (audit.decision, audit.actor_client_id) == ("failed", ward_agent.pk)


def test_closing_a_suspended_run_withdraws_its_pending_approvals(api):
    run = make_run(api, "executing")
    approval = park(api, run["id"])

    close(api, run["id"], "user_stopped")

    assert Approval.objects.get(pk=approval["id"]).status == "withdrawn"


def test_closing_a_run_expires_a_card_already_past_its_deadline(api, monkeypatch):
    run = make_run(api, "executing")
    approval = park(api, run["id"])
    frozen_clock(monkeypatch, Approval.objects.get(pk=approval["id"]).expires_at + timedelta(seconds=1))

    close(api, run["id"], "completed")

    assert Approval.objects.get(pk=approval["id"]).status == "expired"  # the deadline came first, swept or not


@pytest.mark.parametrize("state", ["completed", "failed", "aborted"])
@pytest.mark.parametrize("to", ["pending", "planning", "executing", "suspended"])
def test_a_terminal_run_refuses_every_transition(api, state, to):
    run = make_run(api, state)

    response = transition(api, run["id"], to)

    assert error_of(response) == (409, "run_state_transition")
    assert stored_state(run["id"]) == state


@pytest.mark.parametrize("state", ["completed", "failed", "aborted"])
def test_a_terminal_run_takes_no_tool_calls(api, state):
    run = make_run(api, state)
    events_before = event_kinds(run["id"])

    response = post(
        api,
        f"/api/v1/runs/{run['id']}/tool-calls/",
        {
            "tool_call_id": "late",
            "step_id": "late",
            "tool": "prescribe_medication",
            "args": {"drug": "x"},
        },
    )

    assert error_of(response) == (409, "run_not_active")
    assert event_kinds(run["id"]) == events_before


def test_a_rejected_run_cannot_be_resumed(api, reviewer_http):
    run = make_run(api, "executing")
    approval = park(api, run["id"])
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Not indicated."})

    response = resume(api, run["id"], approval["id"], approval["args"])

    assert error_of(response) == (409, "approval_rejected")
    assert "Not indicated." in response.json()["detail"]
    assert stored_state(run["id"]) == "executing"
