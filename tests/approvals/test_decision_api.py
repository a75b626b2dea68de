"""POST approvals/{id}/decision/: reviewers decide; everyone else is refused (SPEC sections 4 and 9)."""

from datetime import timedelta

import pytest

from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import (
    PRESCRIPTION,
    approval_row,
    approve,
    assert_still_waiting,
    decide,
    parked_run,
    suspend,
)
from tests.helpers.clock import frozen_clock, later
from tests.helpers.http import error_of, raw_post
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run, run_state

EDITED = {**PRESCRIPTION, "dose": "250 mg"}


# --- who may decide -------------------------------------------------------------------


def test_a_reviewer_approves(parked, reviewer_http):
    _, approval = parked
    response = decide(reviewer_http, approval["id"], {"approved": True})
    assert response.status_code == 200
    assert response.json()["status"] == "approved"
    assert approval_row(approval["id"]).status == "approved"


def test_an_api_key_cannot_decide(parked, api):
    _, approval = parked
    response = api.post(f"/api/v1/approvals/{approval['id']}/decision/", {"approved": True}, format="json")
    assert response.status_code == 403
    assert approval_row(approval["id"]).status == "pending"


def test_a_compliance_officer_cannot_decide(parked, carl):
    _, approval = parked
    response = decide(logged_in(carl), approval["id"], {"approved": True})
    assert response.status_code == 403
    assert approval_row(approval["id"]).status == "pending"


def test_a_governance_admin_cannot_decide(parked, gina):
    _, approval = parked
    assert decide(logged_in(gina), approval["id"], {"approved": True}).status_code == 403


def test_an_anonymous_caller_cannot_decide(parked, client):
    _, approval = parked
    response = client.post(
        f"/api/v1/approvals/{approval['id']}/decision/", {"approved": True}, content_type="application/json"
    )
    assert response.status_code == 403
    assert approval_row(approval["id"]).status == "pending"


def test_a_decision_without_the_csrf_token_is_refused(parked, reviewer_http):
    _, approval = parked
    response = decide(reviewer_http, approval["id"], {"approved": True}, csrf=False)
    assert response.status_code == 403
    assert approval_row(approval["id"]).status == "pending"


def test_an_unknown_approval_is_not_found(reviewer_http, db):
    response = decide(reviewer_http, "00000000-0000-0000-0000-000000000000", {"approved": True})
    assert response.status_code == 404


def test_the_decider_comes_from_the_login_and_is_audited(parked, reviewer_http, rita):
    _, approval = parked
    body = approve(reviewer_http, approval["id"], reason="Dose checked against weight.")
    assert body["decided_by"] == "rita"
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.DECISION)
    assert (row.actor_user, row.actor, row.decision) == (rita, "user:rita", "approved")
    assert row.data["reason"] == "Dose checked against weight."


def test_a_decided_approval_cannot_be_decided_again(parked, reviewer_http):
    _, approval = parked
    approve(reviewer_http, approval["id"])
    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": "Changed my mind."})
    assert error_of(response) == (409, "approval_not_pending")
    assert approval_row(approval["id"]).status == "approved"


def test_a_decision_after_the_deadline_is_refused(parked, reviewer_http, monkeypatch, settings):
    run_id, approval = parked
    frozen_clock(monkeypatch, later(settings.CONDOR_APPROVAL_TTL_SECONDS + 1))
    response = decide(reviewer_http, approval["id"], {"approved": True})
    assert error_of(response) == (409, "approval_not_pending")
    assert approval_row(approval["id"]).status == "pending"  # the sweep, not the reviewer, marks it expired


# --- approve, reject, edit ----------------------------------------------------------------


def test_approving_resets_expiry_to_decision_time_plus_ttl(parked, reviewer_http, monkeypatch, settings):
    _, approval = parked
    decided_at = frozen_clock(monkeypatch, later(600))
    approve(reviewer_http, approval["id"])
    row = approval_row(approval["id"])
    assert row.decided_at == decided_at
    assert row.expires_at == decided_at + timedelta(seconds=settings.CONDOR_APPROVAL_TTL_SECONDS)


def test_edit_then_approve_keeps_the_original_args(parked, reviewer_http):
    _, approval = parked
    body = approve(reviewer_http, approval["id"], edited_args=EDITED)
    assert body["args"] == PRESCRIPTION
    assert body["approved_args"] == EDITED


def test_edit_then_approve_hashes_the_approved_args(parked, reviewer_http):
    from core.hashing import payload_hash

    _, approval = parked
    body = approve(reviewer_http, approval["id"], edited_args=EDITED)
    assert body["payload_hash"] == payload_hash(EDITED) != approval["payload_hash"]


def test_edited_args_only_accompany_an_approval(parked, reviewer_http):
    run_id, approval = parked
    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": "no", "edited_args": EDITED})
    assert error_of(response) == (400, "invalid_payload")
    assert_still_waiting(run_id, approval)


def test_edited_args_must_be_an_object(parked, reviewer_http):
    _, approval = parked
    response = decide(reviewer_http, approval["id"], {"approved": True, "edited_args": ["250 mg"]})
    assert response.status_code == 400
    assert approval_row(approval["id"]).status == "pending"


def test_a_rejection_denies_the_call_and_the_run_executes_again(parked, reviewer_http):
    run_id, approval = parked
    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": "Penicillin allergy."})
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["decision_reason"]) == ("rejected", "Penicillin allergy.")
    assert run_state(run_id) == ("executing", "")


def test_a_rejection_leaves_the_other_pending_approvals_of_the_run_pending(parked, api, reviewer_http):
    run_id, approval = parked
    sibling = suspend(
        api, run_id, tool="submit_billing_claim", op="submit", args={"claim_id": "c-7"}, tool_call_id="call-2"
    )
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Penicillin allergy."})
    assert approval_row(sibling["id"]).status == "pending"
    assert run_state(run_id) == ("suspended", "")


def test_a_rejection_leaves_an_approved_sibling_approved(parked, api, reviewer_http):
    run_id, approval = parked
    sibling = suspend(
        api, run_id, tool="submit_billing_claim", op="submit", args={"claim_id": "c-7"}, tool_call_id="call-2"
    )
    approve(reviewer_http, sibling["id"])
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Penicillin allergy."})
    assert approval_row(sibling["id"]).status == "approved"


def test_a_rejection_streams_the_denial_frame(parked, reviewer_http):
    run_id, approval = parked
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Penicillin allergy."})
    rejected = RunEvent.objects.get(run_id=run_id, kind="approval.rejected")
    assert [frame["type"] for frame in rejected.frames] == ["data-approval-decision", "tool-output-denied"]
    assert rejected.frames[-1] == {"type": "tool-output-denied", "toolCallId": "call-1"}


@pytest.mark.parametrize("body", [{"approved": False}, {"approved": False, "reason": "   "}])
def test_a_rejection_needs_a_reason(parked, reviewer_http, body):
    run_id, approval = parked
    response = decide(reviewer_http, approval["id"], body)
    assert error_of(response) == (400, "invalid_payload")
    assert_still_waiting(run_id, approval)


# --- the resume schema ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"approved": True, "approver": "rita"},
        {"approved": "yes"},
        {"approved": 1},
        {"reason": "looks fine"},
        {},
        {"approved": True, "reason": 42},
        {"values": {"route": "oral"}},
    ],
    ids=[
        "extra-key",
        "approved-string",
        "approved-number",
        "approved-missing",
        "empty",
        "reason-number",
        "values-on-an-approval",
    ],
)
def test_a_decision_its_schema_refuses_fails_the_run(parked, reviewer_http, body):
    run_id, approval = parked
    response = decide(reviewer_http, approval["id"], body)
    assert error_of(response) == (422, "resume_schema_rejected")
    assert run_state(run_id) == ("failed", "resume_schema_rejected")
    assert approval_row(approval["id"]).status == "rejected"


def test_a_schema_rejection_is_audited_with_the_reviewer(parked, reviewer_http, rita):
    _, approval = parked
    decide(reviewer_http, approval["id"], {"approved": "yes"})
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.DECISION)
    assert (row.actor_user, row.decision) == (rita, "resume_schema_rejected")


@pytest.mark.parametrize(
    "raw",
    [
        '{"approved": true, "approved": false}',
        '{"approved": true, "edited_args": {"dose": NaN}}',
        '{"approved": true, "edited_args": {"units": 9007199254740992}}',
        "[true]",
    ],
    ids=["duplicate-key", "nan", "2**53", "non-object"],
)
def test_a_malformed_decision_body_is_refused_and_changes_nothing(parked, reviewer_http, raw):
    run_id, approval = parked
    response = reviewer_http.post(
        f"/api/v1/approvals/{approval['id']}/decision/",
        raw,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=reviewer_http.cookies["csrftoken"].value,
    )
    assert error_of(response) == (400, "invalid_payload")
    assert_still_waiting(run_id, approval)


# --- reading an approval -----------------------------------------------------------------------


def test_an_agent_reads_its_own_approval(parked, api):
    _, approval = parked
    response = api.get(f"/api/v1/approvals/{approval['id']}/")
    assert response.status_code == 200
    assert response.json()["id"] == approval["id"]


def test_another_clients_approval_is_not_found(parked, other_api):
    _, approval = parked
    assert other_api.get(f"/api/v1/approvals/{approval['id']}/").status_code == 404


def test_a_reviewer_reads_any_approval(parked, reviewer_http):
    _, approval = parked
    response = reviewer_http.get(f"/api/v1/approvals/{approval['id']}/")
    assert (response.status_code, response.json()["status"]) == (200, "pending")


def test_a_compliance_officer_cannot_read_approvals_through_the_api(parked, carl):
    _, approval = parked
    assert logged_in(carl).get(f"/api/v1/approvals/{approval['id']}/").status_code == 403


def test_raw_post_helper_sends_bytes_verbatim(api, db):
    # Guards the strict-body tests: the parser, not the helper, refuses these.
    response = raw_post(api, "/api/v1/sessions/", '{"title": "a", "title": "b"}')
    assert response.status_code == 400


def test_a_schema_rejection_denies_the_tool_call_on_the_stream(parked, reviewer_http):
    run_id, approval = parked
    decide(reviewer_http, approval["id"], {"approved": "yes"})
    closed = RunEvent.objects.get(run_id=run_id, kind="run.closed")
    assert closed.data["terminal_reason"] == "resume_schema_rejected"
    rejected = RunEvent.objects.get(run_id=run_id, kind="approval.rejected")
    assert rejected.frames[-1] == {"type": "tool-output-denied", "toolCallId": "call-1"}


# --- edits stay inside the tool's egress allow-list ---------------------------------------------------

EMAIL = {"host": "smtp.clinic.example", "to": "gp@example.org", "body": "Discharge letter attached."}


@pytest.fixture
def parked_email(api):
    """(run id, approval) for an email a guarded session must have approved (allowed host smtp.clinic.example)."""
    run_id, approval = parked_run(
        api, {"autonomy": "guarded", "age_band": "adult"}, tool="send_email", op="send", args=EMAIL
    )
    assert approval["rule_id"] == "comms.approval"
    return run_id, approval


@pytest.mark.parametrize(
    "edit",
    [
        {"host": "smtp.elsewhere.example"},
        {"url": "https://exfil.example/upload"},
        {"host": "smtp.clinic.example.exfil.example"},
    ],
    ids=["other-host", "added-url", "lookalike-host"],
)
def test_edited_args_may_not_send_data_to_another_host(parked_email, reviewer_http, edit):
    run_id, approval = parked_email
    response = decide(reviewer_http, approval["id"], {"approved": True, "edited_args": {**EMAIL, **edit}})
    assert error_of(response) == (400, "invalid_payload")
    row = approval_row(approval["id"])
    assert (row.status, row.payload_hash, row.approved_args) == ("pending", approval["payload_hash"], None)
    assert run_state(run_id) == ("suspended", "")


def test_edited_args_to_an_allowed_host_are_approved(parked_email, reviewer_http):
    _, approval = parked_email
    edited = {**EMAIL, "to": "practice@example.org"}
    body = approve(reviewer_http, approval["id"], edited_args=edited)
    assert (body["status"], body["approved_args"]) == ("approved", edited)


def test_an_approval_counts_as_activity_on_its_run(api, reviewer_http):
    from datetime import timedelta

    from django.utils import timezone

    from runs.models import Run

    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    Run.objects.filter(pk=run_id).update(last_activity_at=timezone.now() - timedelta(hours=1))
    before = timezone.now()
    approve(reviewer_http, approval["id"])
    assert before <= Run.objects.get(pk=run_id).last_activity_at <= timezone.now()
