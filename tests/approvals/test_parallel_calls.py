"""Parallel tool calls in one step: each parks its own approval; the run waits for the last one."""

from datetime import timedelta

from django.utils import timezone

from tests.helpers.approval_loop import PRESCRIPTION, approve, resume, suspend
from tests.helpers.clock import frozen_clock
from tests.helpers.runs import open_executing_run, run_state


def park_three(api, run_id):
    return [
        suspend(api, run_id, tool_call_id="call-1"),
        suspend(api, run_id, tool_call_id="call-2", tool="submit_billing_claim", op="submit", args={"claim_id": "c-7"}),
        suspend(api, run_id, tool_call_id="call-3", tool="change_medication", op="update", args={"id": "m-3"}),
    ]


def test_parallel_calls_in_one_step_each_add_an_approval(api):
    run_id = open_executing_run(api)
    approvals = park_three(api, run_id)
    assert len({approval["id"] for approval in approvals}) == 3
    assert {approval["tool_call_id"] for approval in approvals} == {"call-1", "call-2", "call-3"}


def test_the_run_stays_suspended_until_the_last_open_approval_is_consumed(api, reviewer_http):
    run_id = open_executing_run(api)
    first, second, third = park_three(api, run_id)
    for approval in (first, second, third):
        approve(reviewer_http, approval["id"])
    assert resume(api, run_id, first["id"]).status_code == 200
    assert run_state(run_id) == ("suspended", "")
    assert resume(api, run_id, second["id"], {"claim_id": "c-7"}).status_code == 200
    assert run_state(run_id) == ("suspended", "")
    last = resume(api, run_id, third["id"], {"id": "m-3"})
    assert last.status_code == 200
    assert last.json()["run"]["state"] == "executing"


def test_a_still_pending_sibling_keeps_the_run_parked(api, reviewer_http):
    run_id = open_executing_run(api)
    first, second, _ = park_three(api, run_id)
    approve(reviewer_http, first["id"])
    response = resume(api, run_id, first["id"])
    assert response.status_code == 200
    assert response.json()["run"]["state"] == "suspended"
    assert resume(api, run_id, second["id"], {"claim_id": "c-7"}).json()["error"] == "approval_pending"


def test_each_parallel_approval_echoes_its_own_args(api, reviewer_http):
    run_id = open_executing_run(api)
    first, second, _ = park_three(api, run_id)
    approve(reviewer_http, second["id"])
    approve(reviewer_http, first["id"])
    assert resume(api, run_id, second["id"], {"claim_id": "c-7"}).json()["args"] == {"claim_id": "c-7"}
    assert resume(api, run_id, first["id"]).json()["args"] == PRESCRIPTION


def test_a_sibling_past_its_deadline_does_not_keep_the_run_parked(api, reviewer_http, monkeypatch, settings):
    # Expiry never waits for the sweep: an approval nobody can decide any more is not "open".
    start = frozen_clock(monkeypatch, timezone.now())
    run_id = open_executing_run(api)
    first, _, _ = park_three(api, run_id)
    frozen_clock(monkeypatch, start + timedelta(seconds=100))
    approve(reviewer_http, first["id"])
    frozen_clock(monkeypatch, start + timedelta(seconds=settings.CONDOR_APPROVAL_TTL_SECONDS + 1))
    response = resume(api, run_id, first["id"])
    assert response.status_code == 200
    assert response.json()["run"]["state"] == "executing"
