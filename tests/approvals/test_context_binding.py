"""An approval is bound to the patient context its card showed (SPEC section 4): a resume, a cold replay
or an approval in a session whose context changed since is 409 context_changed, nothing used, audited.

A re-link through the API is refused while approvals are open (tests/sessions_app/test_session_lifecycle.py);
these tests change the session as a re-link that got past that check would (one racing the suspend, or a
write outside the API): with the row itself.
"""

import pytest

from audit.models import AuditEvent
from runs.models import Run
from sessions_app.models import Session
from tests.approvals.test_cold_replay import open_next_run
from tests.helpers.approval_loop import approval_row, approve, decide, gate, parked_run, resume
from tests.helpers.http import error_of
from tests.helpers.runs import run_state

ALICE = {"patient_ref": "MRN-ALICE", "age_band": "adult", "consent": True}


def relink(run_id, **fields) -> None:
    Session.objects.filter(pk=Run.objects.get(pk=run_id).session_id).update(**fields)


@pytest.fixture
def alices(api, catalog):
    """(run id, approval) of a prescription parked in Alice's session."""
    return parked_run(api, ALICE)


@pytest.fixture
def approved_for_alice(alices, reviewer_http):
    run_id, approval = alices
    approve(reviewer_http, approval["id"])
    return run_id, approval


def test_an_approval_records_the_patient_context_its_card_showed(alices):
    _, approval = alices
    assert approval["bound_context"] == ALICE
    assert approval_row(approval["id"]).bound_context == ALICE


def test_the_reviewers_card_carries_the_context_it_binds_also_after_a_relink(alices, reviewer_http):
    run_id, approval = alices
    relink(run_id, patient_ref="MRN-BOB")

    (card,) = [
        card for card in reviewer_http.get("/api/v1/inbox/cards/").json()["cards"] if card["id"] == approval["id"]
    ]

    assert card["bound_context"] == ALICE  # what an approval would bind, not the session's new patient


def test_a_resume_after_a_relink_is_refused_and_consumes_nothing(approved_for_alice, api):
    run_id, approval = approved_for_alice
    relink(run_id, patient_ref="MRN-BOB")

    response = resume(api, run_id, approval["id"])

    assert error_of(response) == (409, "context_changed")
    assert "MRN-ALICE" in response.json()["detail"] and "MRN-BOB" in response.json()["detail"]
    assert approval_row(approval["id"]).status == "approved"
    assert run_state(run_id) == ("suspended", "")
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.CONSUME, decision="consumed").exists()


@pytest.mark.parametrize("change", [{"age_band": "child"}, {"consent": False}], ids=["age_band", "consent"])
def test_a_resume_after_the_age_band_or_consent_changed_is_refused(approved_for_alice, api, change):
    run_id, approval = approved_for_alice
    relink(run_id, **change)

    assert error_of(resume(api, run_id, approval["id"])) == (409, "context_changed")
    assert approval_row(approval["id"]).status == "approved"


def test_a_refused_resume_is_audited_though_the_refusal_rolled_back(approved_for_alice, api):
    run_id, approval = approved_for_alice
    relink(run_id, patient_ref="MRN-BOB")

    resume(api, run_id, approval["id"])

    row = AuditEvent.objects.get(kind=AuditEvent.Kind.CONSUME)
    assert (row.decision, str(row.approval_id), row.actor, row.patient_ref) == (
        "context_changed",
        approval["id"],
        "client:ward-agent",
        "MRN-BOB",
    )
    assert row.data["bound_context"]["patient_ref"] == "MRN-ALICE"
    assert row.data["session_context"]["patient_ref"] == "MRN-BOB"


def test_a_refused_resume_under_an_idempotency_key_is_audited_and_consumes_nothing(approved_for_alice, api):
    run_id, approval = approved_for_alice
    relink(run_id, patient_ref="MRN-BOB")

    assert error_of(resume(api, run_id, approval["id"], key="resume-1")) == (409, "context_changed")

    assert approval_row(approval["id"]).status == "approved"
    assert AuditEvent.objects.filter(kind=AuditEvent.Kind.CONSUME, decision="context_changed").count() == 1


def test_a_resume_once_the_context_is_back_proceeds(approved_for_alice, api):
    run_id, approval = approved_for_alice
    relink(run_id, patient_ref="MRN-BOB")
    assert resume(api, run_id, approval["id"]).status_code == 409
    relink(run_id, patient_ref="MRN-ALICE")

    assert resume(api, run_id, approval["id"]).status_code == 200


def test_a_cold_replay_after_a_relink_is_refused(approved_for_alice, api):
    run_id, approval = approved_for_alice
    next_run = open_next_run(api, run_id)
    relink(next_run, patient_ref="MRN-BOB")

    response = gate(api, next_run, tool_call_id="call-9")

    assert error_of(response) == (409, "context_changed")
    assert approval_row(approval["id"]).status == "approved"
    verdict = AuditEvent.objects.get(kind=AuditEvent.Kind.VERDICT, run_id=next_run)
    assert (verdict.decision, verdict.patient_ref) == ("context_changed", "MRN-BOB")


def test_a_cold_replay_in_the_same_context_still_runs_on_the_grant(approved_for_alice, api):
    run_id, approval = approved_for_alice
    next_run = open_next_run(api, run_id)

    response = gate(api, next_run, tool_call_id="call-9")

    assert (response.status_code, response.json()["rule_id"]) == (200, "approval.prior-grant")
    assert approval_row(approval["id"]).status == "consumed"


def test_an_approval_of_a_card_whose_session_was_relinked_is_refused(alices, reviewer_http):
    run_id, approval = alices
    relink(run_id, patient_ref="MRN-BOB")

    response = decide(reviewer_http, approval["id"], {"approved": True})

    assert error_of(response) == (409, "context_changed")
    assert approval_row(approval["id"]).status == "pending"
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.DECISION)
    assert (row.decision, row.actor) == ("context_changed", "user:rita")


def test_a_rejection_of_such_a_card_is_still_accepted(alices, reviewer_http):
    run_id, approval = alices
    relink(run_id, patient_ref="MRN-BOB")

    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": "Wrong patient now."})

    assert response.status_code == 200
    assert approval_row(approval["id"]).status == "rejected"
