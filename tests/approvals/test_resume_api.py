"""POST runs/{id}/resume/: single-use, hash-bound, and every refusal named (SPEC sections 4 and 9)."""

from datetime import timedelta

import pytest

from audit.models import AuditEvent
from tests.helpers.approval_loop import PRESCRIPTION, approval_row, approve, decide, resume, suspend
from tests.helpers.clock import frozen_clock, later
from tests.helpers.http import error_of, raw_post
from tests.helpers.runs import open_executing_run, run_state

NESTED = {"drug": "amoxicillin", "dose": {"value": 1, "unit": "g"}, "note": "café", "days": [1, 2.5]}


@pytest.fixture
def approved(parked, reviewer_http):
    run_id, approval = parked
    approve(reviewer_http, approval["id"])
    return run_id, approval


def test_an_approved_call_resumes_the_run(approved, api):
    run_id, approval = approved
    response = resume(api, run_id, approval["id"])
    assert response.status_code == 200
    body = response.json()
    assert (body["proceed"], body["args"], body["values"]) == (True, PRESCRIPTION, {})
    assert body["run"]["state"] == "executing"
    assert body["approval"]["status"] == "consumed"
    assert run_state(run_id) == ("executing", "")


def test_a_resume_is_audited_as_a_consume(approved, api):
    run_id, approval = approved
    resume(api, run_id, approval["id"])
    row = AuditEvent.objects.get(kind=AuditEvent.Kind.CONSUME)
    assert (str(row.approval_id), row.actor) == (approval["id"], "client:ward-agent")


def test_a_replayed_approval_is_refused(approved, api):
    run_id, approval = approved
    assert resume(api, run_id, approval["id"]).status_code == 200
    assert error_of(resume(api, run_id, approval["id"])) == (409, "approval_consumed")


def test_a_pending_approval_cannot_be_resumed(parked, api):
    run_id, approval = parked
    assert error_of(resume(api, run_id, approval["id"])) == (409, "approval_pending")
    assert approval_row(approval["id"]).status == "pending"


def test_a_rejected_approval_cannot_be_resumed(parked, api, reviewer_http):
    run_id, approval = parked
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Penicillin allergy."})
    assert error_of(resume(api, run_id, approval["id"])) == (409, "approval_rejected")


def test_tampered_args_are_a_payload_mismatch(approved, api):
    run_id, approval = approved
    response = resume(api, run_id, approval["id"], {**PRESCRIPTION, "dose": "5000 mg"})
    assert error_of(response) == (409, "payload_mismatch")
    assert approval_row(approval["id"]).status == "approved"
    assert run_state(run_id) == ("suspended", "")


def test_a_mismatch_does_not_burn_the_approval(approved, api):
    run_id, approval = approved
    resume(api, run_id, approval["id"], {**PRESCRIPTION, "days": 70})
    assert resume(api, run_id, approval["id"]).status_code == 200


def test_a_run_that_is_no_longer_suspended_cannot_resume(approved, api):
    run_id, approval = approved
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "user_stopped"}, format="json")
    assert error_of(resume(api, run_id, approval["id"])) == (409, "run_not_suspended")
    assert approval_row(approval["id"]).status == "approved"


# --- expiry, with a frozen clock and no sweep ------------------------------------------------


def test_an_expired_approval_is_gone_without_any_sweep(approved, api, monkeypatch, settings):
    run_id, approval = approved
    frozen_clock(monkeypatch, later(settings.CONDOR_APPROVAL_TTL_SECONDS + 1))
    assert error_of(resume(api, run_id, approval["id"])) == (410, "approval_expired")
    assert approval_row(approval["id"]).status == "approved"  # nobody swept; the deadline alone decides


def test_an_approval_is_good_until_just_before_its_deadline(approved, api, monkeypatch):
    run_id, approval = approved
    frozen_clock(monkeypatch, approval_row(approval["id"]).expires_at - timedelta(microseconds=1))
    assert resume(api, run_id, approval["id"]).status_code == 200


def test_approving_late_restarts_the_clock(parked, api, reviewer_http, monkeypatch, settings):
    run_id, approval = parked
    ttl = settings.CONDOR_APPROVAL_TTL_SECONDS
    frozen_clock(monkeypatch, later(ttl - 10))
    approve(reviewer_http, approval["id"])
    frozen_clock(monkeypatch, later(ttl - 10))  # past the original deadline, within the new one
    assert resume(api, run_id, approval["id"]).status_code == 200


def test_a_pending_approval_past_its_deadline_is_expired_not_pending(parked, api, monkeypatch, settings):
    # Telling the agent "pending" would keep it waiting for a decision that can no longer come.
    run_id, approval = parked
    frozen_clock(monkeypatch, later(settings.CONDOR_APPROVAL_TTL_SECONDS + 1))
    assert error_of(resume(api, run_id, approval["id"])) == (410, "approval_expired")


# --- canonical hashing through the API ------------------------------------------------------


@pytest.fixture
def nested_approval(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id, args=NESTED)
    approve(reviewer_http, approval["id"])
    return run_id, approval


def resume_raw(api, run_id, approval_id, raw_args: str):
    return raw_post(api, f"/api/v1/runs/{run_id}/resume/", f'{{"approval_id": "{approval_id}", "args": {raw_args}}}')


@pytest.mark.parametrize(
    "raw_args",
    [
        '{"days": [1, 2.5], "note": "café", "dose": {"unit": "g", "value": 1}, "drug": "amoxicillin"}',
        '{"drug": "amoxicillin", "dose": {"value": 1.0, "unit": "g"}, "note": "café", "days": [1.0, 2.50]}',
        '{"drug": "amoxicillin", "dose": {"value": 1E0, "unit": "g"}, "note": "caf\\u00e9", "days": [1, 25e-1]}',
        '{ "drug" : "amoxicillin" ,\n "dose":{"value":1,"unit":"g"},"note":"café","days":[1,2.5] }',
    ],
    ids=["reordered-keys", "one-point-zero", "escapes-and-exponents", "whitespace"],
)
def test_the_same_json_value_in_another_spelling_resumes(nested_approval, api, raw_args):
    run_id, approval = nested_approval
    response = resume_raw(api, run_id, approval["id"], raw_args)
    assert response.status_code == 200, response.content
    assert response.json()["args"] == NESTED


@pytest.mark.parametrize(
    "raw_args",
    [
        '{"drug": "amoxicillin", "dose": {"value": 1, "unit": "g"}, "note": "cafe\\u0301", "days": [1, 2.5]}',
        '{"drug": "amoxicillin", "dose": {"value": 1, "unit": "g"}, "note": "café", "days": [2.5, 1]}',
        '{"drug": "amoxicillin", "dose": {"value": "1", "unit": "g"}, "note": "café", "days": [1, 2.5]}',
        '{"drug": "amoxicillin", "dose": {"value": 1, "unit": "g", "route": null}, "note": "café", "days": [1, 2.5]}',
        '{"drug": "amoxicillin", "dose": {"value": 1, "unit": "g"}, "note": "café", "days": [1, 2.5], "x": {}}',
    ],
    ids=["decomposed-unicode", "list-order", "number-as-string", "extra-null", "extra-key"],
)
def test_a_different_json_value_is_a_payload_mismatch(nested_approval, api, raw_args):
    run_id, approval = nested_approval
    assert error_of(resume_raw(api, run_id, approval["id"], raw_args)) == (409, "payload_mismatch")


# --- edit then approve ---------------------------------------------------------------------------

EDITED = {**PRESCRIPTION, "dose": "250 mg"}


@pytest.fixture
def edited(parked, reviewer_http):
    run_id, approval = parked
    approve(reviewer_http, approval["id"], edited_args=EDITED)
    return run_id, approval


def test_after_an_edit_the_original_args_are_a_mismatch(edited, api):
    run_id, approval = edited
    assert error_of(resume(api, run_id, approval["id"], PRESCRIPTION)) == (409, "payload_mismatch")


def test_after_an_edit_the_edited_args_resume_and_are_echoed(edited, api):
    run_id, approval = edited
    response = resume(api, run_id, approval["id"], EDITED)
    assert response.status_code == 200
    assert response.json()["args"] == EDITED
    assert response.json()["approval"]["args"] == PRESCRIPTION


# --- scope and strict bodies -----------------------------------------------------------------------


def test_another_clients_run_is_not_found(approved, other_api):
    run_id, approval = approved
    assert error_of(resume(other_api, run_id, approval["id"])) == (404, "not_found")
    assert approval_row(approval["id"]).status == "approved"


def test_an_approval_of_another_run_is_not_found(approved, api):
    _, approval = approved
    other_run = open_executing_run(api)
    assert error_of(resume(api, other_run, approval["id"])) == (404, "not_found")
    assert approval_row(approval["id"]).status == "approved"


@pytest.mark.parametrize(
    "raw",
    [
        '{"approval_id": "%s", "args": {"dose": "500 mg", "dose": "1 g"}}',
        '{"approval_id": "%s", "args": {"dose": NaN}}',
        '{"approval_id": "%s", "args": {"units": 9007199254740992}}',
        '{"approval_id": "%s", "args": ["500 mg"]}',
        '{"approval_id": "%s", "args": {}, "force": true}',
        '{"approval_id": "%s"}',
        '{"approval_id": "not-a-uuid-%s", "args": {}}',
        '["%s"]',
    ],
    ids=["duplicate-key", "nan", "2**53", "args-not-object", "unknown-field", "no-args", "bad-id", "non-object"],
)
def test_a_malformed_resume_is_refused_and_consumes_nothing(approved, api, raw):
    run_id, approval = approved
    response = raw_post(api, f"/api/v1/runs/{run_id}/resume/", raw % approval["id"])
    assert error_of(response) == (400, "invalid_payload")
    assert approval_row(approval["id"]).status == "approved"
    assert run_state(run_id) == ("suspended", "")
