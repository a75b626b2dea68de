"""Idempotency-Key on resume (SPEC section 4): a retry replays the first answer; another body is refused."""

import pytest

from agents.models import IdempotencyRecord
from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, approve, resume, suspend
from tests.helpers.http import raw_post
from tests.helpers.runs import open_executing_run


@pytest.fixture
def approved(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    approve(reviewer_http, approval["id"])
    return run_id, approval


def test_a_retry_with_the_same_key_and_body_replays_the_first_answer(approved, api):
    run_id, approval = approved
    first = resume(api, run_id, approval["id"], key="resume-1")
    again = resume(api, run_id, approval["id"], key="resume-1")
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json() == first.json()


def test_a_replay_consumes_nothing_twice(approved, api):
    run_id, approval = approved
    for _ in range(3):
        resume(api, run_id, approval["id"], key="resume-1")
    assert AuditEvent.objects.filter(kind=AuditEvent.Kind.CONSUME).count() == 1
    assert RunEvent.objects.filter(run_id=run_id, kind="approval.consumed").count() == 1


def test_without_a_key_a_retry_is_told_the_approval_is_used(approved, api):
    # Guards the test above: the replay, not luck, is what answers 200 twice.
    run_id, approval = approved
    resume(api, run_id, approval["id"])
    assert resume(api, run_id, approval["id"]).json()["error"] == "approval_consumed"


def test_the_same_body_spelled_differently_is_the_same_request(approved, api):
    run_id, approval = approved
    first = resume(api, run_id, approval["id"], key="resume-1")
    args = '{"route": "oral", "days": 7.0, "dose": "500 mg", "drug": "amoxicillin"}'
    body = f'{{"args": {args}, "approval_id": "{approval["id"]}"}}'
    again = raw_post(api, f"/api/v1/runs/{run_id}/resume/", body, HTTP_IDEMPOTENCY_KEY="resume-1")
    assert again.status_code == 200
    assert again.json() == first.json()


def test_the_same_key_with_another_body_is_refused(approved, api):
    run_id, approval = approved
    resume(api, run_id, approval["id"], key="resume-1")
    response = resume(api, run_id, approval["id"], {**PRESCRIPTION, "dose": "1 g"}, key="resume-1")
    assert (response.status_code, response.json()["error"]) == (422, "idempotency_key_reused")


def test_the_same_key_on_another_run_is_refused(approved, api, reviewer_http):
    run_id, approval = approved
    resume(api, run_id, approval["id"], key="resume-1")
    other_run = open_executing_run(api)
    response = resume(api, other_run, approval["id"], key="resume-1")
    assert (response.status_code, response.json()["error"]) == (422, "idempotency_key_reused")


def test_a_retry_after_the_approval_succeeds_with_the_key_of_the_early_refusal(api, reviewer_http):
    # A refusal changed nothing, so it is not stored under the key (Stripe's rule).
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    early = resume(api, run_id, approval["id"], key="K")
    assert (early.status_code, early.json()["error"]) == (409, "approval_pending")
    assert not IdempotencyRecord.objects.exists()
    approve(reviewer_http, approval["id"])
    retried = resume(api, run_id, approval["id"], key="K")
    assert retried.status_code == 200, retried.content
    assert resume(api, run_id, approval["id"], key="K").json() == retried.json()


def test_a_refusal_after_success_is_not_stored_under_another_key(approved, api):
    run_id, approval = approved
    resume(api, run_id, approval["id"], key="first")
    again = resume(api, run_id, approval["id"], key="second")
    assert again.json()["error"] == "approval_consumed"
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["first"]


def test_keys_belong_to_one_client(approved, api, other_api, reviewer_http):
    run_id, approval = approved
    resume(api, run_id, approval["id"], key="shared-key")
    their_run = open_executing_run(other_api)
    theirs = suspend(other_api, their_run)
    approve(reviewer_http, theirs["id"])
    response = resume(other_api, their_run, theirs["id"], key="shared-key")
    assert response.status_code == 200
    assert response.json()["approval"]["id"] == theirs["id"]


@pytest.mark.parametrize("key", ["", "k" * 256])
def test_an_unusable_key_is_refused_and_consumes_nothing(approved, api, key):
    run_id, approval = approved
    response = resume(api, run_id, approval["id"], key=key)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert not IdempotencyRecord.objects.exists()
    assert resume(api, run_id, approval["id"]).status_code == 200
