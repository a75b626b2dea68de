"""A rejection denies that call, not the run; stopping the run is the reviewer's explicit choice (SPEC 3, 4).

Personas: the ward agent's key in `api`, rita the reviewer in `reviewer_http`.
"""

import pytest

from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, approval_row, approve, clarify, decide, gate, resume, suspend
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run, run_state

REASON = "Penicillin allergy on file; propose an alternative."
OTHER = {"drug": "metformin", "dose": "500 mg", "route": "oral", "days": 30}
THIRD = {"drug": "ibuprofen", "dose": "200 mg", "route": "oral", "days": 3}


def reject(http, approval_id, reason=REASON, **extra):
    response = decide(http, approval_id, {"approved": False, "reason": reason, **extra})
    assert response.status_code == 200, response.content
    return response.json()


def stop(http, run_id, body):
    from tests.helpers.http import post_json

    return post_json(http, f"/api/v1/runs/{run_id}/stop/", body)


def audit_kinds(run_id) -> list[tuple[str, str]]:
    return list(AuditEvent.objects.filter(run_id=run_id).order_by("id").values_list("kind", "decision"))


# --- reject without stop ---------------------------------------------------------------


def test_a_rejection_denies_the_call_and_the_run_goes_back_to_executing(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    body = reject(reviewer_http, approval["id"])
    assert (body["status"], body["decision_reason"]) == ("rejected", REASON)
    assert run_state(run_id) == ("executing", "")


def test_after_a_rejection_the_agent_gates_a_new_proposal_at_once(api, run_id, reviewer_http):
    reject(reviewer_http, suspend(api, run_id)["id"])
    again = gate(api, run_id, args=OTHER, step_id="step-2", tool_call_id="call-2")
    assert again.status_code == 202, again.content
    assert run_state(run_id) == ("suspended", "")


def test_the_resume_answer_carries_the_reason(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    reject(reviewer_http, approval["id"])
    response = resume(api, run_id, approval["id"])
    assert response.status_code == 409
    assert response.json()["error"] == "approval_rejected"
    assert REASON in response.json()["detail"]


def test_the_approval_fetch_carries_the_reason(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    reject(reviewer_http, approval["id"])
    fetched = api.get(f"/api/v1/approvals/{approval['id']}/").json()
    assert (fetched["status"], fetched["decision_reason"], fetched["decided_by"]) == ("rejected", REASON, "rita")


def test_gating_the_rejected_call_again_is_refused_with_the_reason(api, run_id, reviewer_http):
    reject(reviewer_http, suspend(api, run_id)["id"])
    again = gate(api, run_id)
    assert again.status_code == 409
    assert again.json()["error"] == "approval_rejected"
    assert REASON in again.json()["detail"]


def test_a_rejection_leaves_the_run_parked_while_a_sibling_is_still_pending(api, run_id, reviewer_http):
    first = suspend(api, run_id)
    second = suspend(api, run_id, args=OTHER, tool_call_id="call-2")
    reject(reviewer_http, first["id"])
    assert run_state(run_id) == ("suspended", "")
    assert approval_row(second["id"]).status == "pending"
    reject(reviewer_http, second["id"], reason="Not indicated.")
    assert run_state(run_id) == ("executing", "")


def test_a_rejection_leaves_the_run_parked_while_a_sibling_grant_is_unused(api, run_id, reviewer_http):
    first = suspend(api, run_id)
    second = suspend(api, run_id, args=OTHER, tool_call_id="call-2")
    approve(reviewer_http, second["id"])
    reject(reviewer_http, first["id"])
    assert run_state(run_id) == ("suspended", "")
    assert resume(api, run_id, second["id"], OTHER).status_code == 200
    assert run_state(run_id) == ("executing", "")


def test_a_declined_clarification_denies_that_question_only(api, run_id, reviewer_http):
    response = clarify(api, run_id, [{"name": "route", "type": "string"}])
    assert response.status_code == 202, response.content
    reject(reviewer_http, response.json()["approval"]["id"], reason="Ask the prescriber, not me.")
    assert run_state(run_id) == ("executing", "")


def test_a_rejection_is_audited_once_with_its_reason(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    reject(reviewer_http, approval["id"])
    row = AuditEvent.objects.get(approval_id=approval["id"], kind="decision")
    assert (row.decision, row.actor, row.data["reason"], row.data["stop_run"]) == (
        "rejected",
        "user:rita",
        REASON,
        False,
    )
    assert not AuditEvent.objects.filter(run_id=run_id, kind="run_close").exists()


# --- reject and stop the run -------------------------------------------------------------


@pytest.fixture
def three_cards(api, run_id, reviewer_http):
    """(rejected-to-be, a pending sibling, an approved but unused sibling) on one parked run."""
    target = suspend(api, run_id)
    pending = suspend(api, run_id, args=OTHER, tool_call_id="call-2")
    granted = suspend(api, run_id, args=THIRD, tool_call_id="call-3")
    approve(reviewer_http, granted["id"])
    return target, pending, granted


def test_reject_and_stop_aborts_the_run_and_withdraws_every_open_sibling(api, run_id, reviewer_http, three_cards):
    target, pending, granted = three_cards
    reject(reviewer_http, target["id"], stop_run=True)
    assert run_state(run_id) == ("aborted", "approval_denied")
    assert approval_row(target["id"]).status == "rejected"
    assert approval_row(pending["id"]).status == "withdrawn"
    assert approval_row(granted["id"]).status == "withdrawn"
    refused = resume(api, run_id, granted["id"], THIRD)
    assert (refused.status_code, refused.json()["error"]) == (410, "approval_withdrawn")


def test_reject_and_stop_is_audited_step_by_step(api, run_id, reviewer_http, three_cards):
    target, _, _ = three_cards
    reject(reviewer_http, target["id"], stop_run=True)
    tail = audit_kinds(run_id)[-4:]
    assert tail == [
        ("decision", "rejected"),
        ("withdrawal", "withdrawn"),
        ("withdrawal", "withdrawn"),
        ("run_close", "aborted"),
    ]
    close = AuditEvent.objects.get(run_id=run_id, kind="run_close")
    assert (close.actor, close.data["terminal_reason"], close.data["stop_reason"]) == (
        "user:rita",
        "approval_denied",
        REASON,
    )


def test_stop_run_only_accompanies_a_rejection(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    response = decide(reviewer_http, approval["id"], {"approved": True, "stop_run": True})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert approval_row(approval["id"]).status == "pending"


def test_stop_run_must_be_a_boolean(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": REASON, "stop_run": "yes"})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert run_state(run_id) == ("suspended", "")


def test_a_declined_clarification_can_stop_the_run(api, run_id, reviewer_http):
    response = clarify(api, run_id, [{"name": "route", "type": "string"}])
    reject(reviewer_http, response.json()["approval"]["id"], reason="Wrong patient.", stop_run=True)
    assert run_state(run_id) == ("aborted", "approval_denied")


# --- POST runs/{id}/stop/ -----------------------------------------------------------------


def test_a_reviewer_stops_a_parked_run(api, run_id, reviewer_http, three_cards):
    target, pending, granted = three_cards
    response = stop(reviewer_http, run_id, {"reason": "Patient transferred to another ward."})
    assert response.status_code == 200, response.content
    assert (response.json()["state"], response.json()["terminal_reason"]) == ("aborted", "user_stopped")
    assert {approval_row(a["id"]).status for a in (target, pending, granted)} == {"withdrawn"}


def test_a_stop_is_audited_with_the_reviewer_and_reason(api, run_id, reviewer_http, three_cards):
    stop(reviewer_http, run_id, {"reason": "Patient transferred."})
    tail = audit_kinds(run_id)[-4:]
    assert tail == [("withdrawal", "withdrawn")] * 3 + [("run_close", "aborted")]
    close = AuditEvent.objects.get(run_id=run_id, kind="run_close")
    assert (close.actor, close.data["terminal_reason"], close.data["stop_reason"]) == (
        "user:rita",
        "user_stopped",
        "Patient transferred.",
    )


def test_a_reviewer_stops_an_executing_run(api, run_id, reviewer_http):
    assert stop(reviewer_http, run_id, {"reason": "Wrong patient."}).status_code == 200
    assert run_state(run_id) == ("aborted", "user_stopped")


def test_the_stop_reason_is_in_the_run_event_log(api, run_id, reviewer_http):
    stop(reviewer_http, run_id, {"reason": "Wrong patient."})
    closed = RunEvent.objects.get(run_id=run_id, kind="run.closed")
    assert closed.data["stop_reason"] == "Wrong patient."


def test_stopping_needs_a_reason(api, run_id, reviewer_http):
    for body in ({}, {"reason": "  "}):
        response = stop(reviewer_http, run_id, body)
        assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert run_state(run_id) == ("executing", "")


def test_stopping_an_ended_run_returns_it_unchanged(api, run_id, reviewer_http):
    # SPEC 3: a second terminal write is an idempotent no-op; the run says how it ended.
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "completed"}, format="json")
    written = (RunEvent.objects.filter(run_id=run_id).count(), AuditEvent.objects.filter(run_id=run_id).count())
    response = stop(reviewer_http, run_id, {"reason": "Too late."})
    assert response.status_code == 200, response.content
    assert (response.json()["state"], response.json()["terminal_reason"]) == ("completed", "completed")
    assert run_state(run_id) == ("completed", "completed")
    assert (RunEvent.objects.filter(run_id=run_id).count(), AuditEvent.objects.filter(run_id=run_id).count()) == written


def test_stopping_a_stopped_run_again_is_a_no_op(api, run_id, reviewer_http):
    assert stop(reviewer_http, run_id, {"reason": "Wrong patient."}).status_code == 200
    again = stop(reviewer_http, run_id, {"reason": "Wrong patient."})
    assert (again.status_code, again.json()["terminal_reason"]) == (200, "user_stopped")
    assert RunEvent.objects.filter(run_id=run_id, kind="run.closed").count() == 1


def test_an_api_key_cannot_stop_a_run(api, run_id):
    response = api.post(f"/api/v1/runs/{run_id}/stop/", {"reason": "I want out."}, format="json")
    assert response.status_code == 403
    assert run_state(run_id) == ("executing", "")


def test_compliance_and_governance_cannot_stop_a_run(api, run_id, carl, gina):
    for person in (carl, gina):
        assert stop(logged_in(person), run_id, {"reason": "No."}).status_code == 403
    assert run_state(run_id) == ("executing", "")


def test_stopping_without_the_csrf_token_is_refused(api, run_id, reviewer_http):
    from tests.helpers.http import post_json

    response = post_json(reviewer_http, f"/api/v1/runs/{run_id}/stop/", {"reason": "x"}, csrf=False)
    assert response.status_code == 403
    assert run_state(run_id) == ("executing", "")


def test_stopping_an_unknown_run_is_404(reviewer_http, db):
    assert stop(reviewer_http, "00000000-0000-0000-0000-000000000000", {"reason": "x"}).status_code == 404


def test_a_plain_close_leaves_grants_consumable_but_a_stop_does_not(api, reviewer_http):
    """SPEC 3: supersede keeps approved grants until expiry; a reviewer's stop withdraws them."""
    kept_run = open_executing_run(api)
    kept = suspend(api, kept_run)
    approve(reviewer_http, kept["id"])
    api.post(f"/api/v1/runs/{kept_run}/close/", {"reason": "completed"}, format="json")
    assert approval_row(kept["id"]).status == "approved"

    stopped_run = open_executing_run(api)
    withdrawn = suspend(api, stopped_run, args=PRESCRIPTION)
    approve(reviewer_http, withdrawn["id"])
    stop(reviewer_http, stopped_run, {"reason": "Stop."})
    assert approval_row(withdrawn["id"]).status == "withdrawn"
