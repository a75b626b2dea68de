"""A client may keep at most CONDOR_MAX_PENDING_PER_CLIENT approvals open (issue 9, item 2).

A runaway agent must not bury the reviewers' inbox: past the limit a suspend is
429 `too_many_pending` and changes nothing; the same suspend sent again still
answers with the card it already has.
"""

import pytest

from approvals.models import Approval, ApprovalStatus, ToolCall
from runs.models import RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, approve, gate, suspend
from tests.helpers.clock import later
from tests.helpers.runs import open_executing_run, run_state

LIMIT = 2


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.CONDOR_MAX_PENDING_PER_CLIENT = LIMIT


def fill_to_the_limit(api, run_id) -> list[dict]:
    return [suspend(api, run_id, step_id=f"step-{n}", tool_call_id=f"call-{n}") for n in range(LIMIT)]


def test_a_suspend_past_the_limit_is_refused(api):
    run_id = open_executing_run(api)
    fill_to_the_limit(api, run_id)
    response = gate(api, run_id, step_id="step-x", tool_call_id="call-x")
    assert response.status_code == 429
    assert response.json()["error"] == "too_many_pending"
    assert str(LIMIT) in response.json()["detail"]


def test_a_refused_suspend_changes_nothing(api):
    run_id = open_executing_run(api)
    fill_to_the_limit(api, run_id)
    before = (Approval.objects.count(), ToolCall.objects.count(), RunEvent.objects.count(), run_state(run_id))
    gate(api, run_id, step_id="step-x", tool_call_id="call-x")
    assert (Approval.objects.count(), ToolCall.objects.count(), RunEvent.objects.count(), run_state(run_id)) == before


def test_the_same_suspend_again_at_the_limit_returns_its_approval(api):
    run_id = open_executing_run(api)
    first, _ = fill_to_the_limit(api, run_id)
    assert suspend(api, run_id, step_id="step-0", tool_call_id="call-0")["id"] == first["id"]


def test_the_limit_counts_every_run_of_the_client(api):
    fill_to_the_limit(api, open_executing_run(api))
    other_run = open_executing_run(api)
    assert gate(api, other_run).status_code == 429


def test_another_clients_open_approvals_do_not_count(api, other_api):
    fill_to_the_limit(api, open_executing_run(api))
    assert gate(other_api, open_executing_run(other_api)).status_code == 202


def test_a_decided_approval_frees_its_place(api, reviewer_http):
    run_id = open_executing_run(api)
    first, _ = fill_to_the_limit(api, run_id)
    approve(reviewer_http, first["id"])
    # Other args: the same ones would be allowed on the fresh grant (cold replay) without parking.
    another = {**PRESCRIPTION, "drug": "doxycycline"}
    assert gate(api, run_id, step_id="step-x", tool_call_id="call-x", args=another).status_code == 202


def test_an_approval_past_its_deadline_no_longer_counts(api):
    run_id = open_executing_run(api)
    fill_to_the_limit(api, run_id)
    Approval.objects.update(expires_at=later(-1))  # expired, not yet swept
    assert Approval.objects.filter(status=ApprovalStatus.PENDING).count() == LIMIT
    assert gate(api, run_id, step_id="step-x", tool_call_id="call-x").status_code == 202
