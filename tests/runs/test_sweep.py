"""The sweep pass (SPEC section 6): expiry, orphaned and overdue suspends, idle runs, pruning."""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents import idempotency
from agents.models import IdempotencyRecord
from approvals import expiry
from approvals.models import Approval
from condor import sweeps as sweep_pass
from runs import sweep as sweeps
from runs.models import Run
from tests.helpers.approval_loop import CHART_READ, decide, gate, park, resume
from tests.helpers.clock import later
from tests.helpers.runs import make_run, stored_state

pytestmark = pytest.mark.usefixtures("catalog")


def test_approvals_past_their_deadline_expire(api):
    run = make_run(api, "executing")
    approval = park(api, run["id"])
    counts = sweep_pass.sweep(now=later(901))
    assert counts["approvals_expired"] == 1
    assert Approval.objects.get(pk=approval["id"]).status == "expired"


def test_a_suspended_run_whose_approvals_all_expired_is_aborted(api):
    run = make_run(api, "executing")
    park(api, run["id"])
    sweep_pass.sweep(now=later(901))
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason) == ("aborted", "approval_expired")


def test_a_run_with_an_approved_unconsumed_approval_is_not_orphaned(api, reviewer_http):
    run = make_run(api, "executing")
    approval = park(api, run["id"])
    assert decide(reviewer_http, approval["id"], {"approved": True}).status_code == 200
    assert expiry.abort_orphaned_suspends() == 0
    assert stored_state(run["id"]) == "suspended"


def test_a_run_suspended_past_the_suspend_ttl_is_aborted(api, settings):
    settings.CONDOR_SUSPEND_TTL_SECONDS = 60
    run = make_run(api, "executing")
    park(api, run["id"])
    assert sweeps.abort_overdue_suspends(later(61)) == 1
    assert Run.objects.get(pk=run["id"]).terminal_reason == "sweep_suspend_ttl"


def parked_hours_ago(run_id, hours: float) -> None:
    """As if the run had parked (and last been active) `hours` ago."""
    then = timezone.now() - timedelta(hours=hours)
    Run.objects.filter(pk=run_id).update(suspended_at=then, last_activity_at=then)


def test_a_parked_run_that_keeps_receiving_gate_calls_still_reaches_the_suspend_ttl(api, settings):
    settings.CONDOR_SUSPEND_TTL_SECONDS = 3600
    run = make_run(api, "executing")
    park(api, run["id"])
    parked_hours_ago(run["id"], 2)
    # The agent keeps calling: a read runs, another call parks beside the first card.
    assert (
        gate(api, run["id"], tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="read-1").status_code
        == 200
    )
    park(api, run["id"])

    assert sweeps.abort_overdue_suspends(timezone.now()) == 1
    assert Run.objects.get(pk=run["id"]).terminal_reason == "sweep_suspend_ttl"


def test_the_park_sets_suspended_at_and_the_unpark_clears_it(api, reviewer_http):
    run = make_run(api, "executing")
    before = timezone.now()
    approval = park(api, run["id"])
    parked_at = Run.objects.get(pk=run["id"]).suspended_at
    assert parked_at is not None and before <= parked_at <= timezone.now()

    decide(reviewer_http, approval["id"], {"approved": True})
    assert resume(api, run["id"], approval["id"]).status_code == 200
    assert Run.objects.get(pk=run["id"]).suspended_at is None

    park(api, run["id"], args={"drug": "ibuprofen", "dose": "200 mg", "route": "oral", "days": 3})
    assert Run.objects.get(pk=run["id"]).suspended_at > parked_at


def test_idle_active_runs_are_aborted_and_busy_ones_are_not(api):
    idle = make_run(api, "executing")
    suspended = make_run(api, "suspended")
    counts = sweep_pass.sweep(now=later(601))
    assert Run.objects.get(pk=idle["id"]).terminal_reason == "sweep_idle"
    assert counts["runs_idle"] == 1
    # A parked run waits for a human: the idle timeout is not its clock.
    assert Run.objects.get(pk=suspended["id"]).terminal_reason != "sweep_idle"


def test_runs_inside_their_timeouts_are_left_alone(api):
    run = make_run(api, "executing")
    counts = sweep_pass.sweep(now=later(10))
    assert counts["runs_idle"] == 0
    assert stored_state(run["id"]) == "executing"


def test_a_failing_row_does_not_stop_the_pass(api, monkeypatch):
    first, second, third = (make_run(api, "executing") for _ in range(3))
    real_close = sweeps.spine.close_locked

    def close_but_fail_first(runs, reason, **kwargs):
        if first["id"] in {str(run.pk) for run in runs}:
            raise RuntimeError("boom")
        return real_close(runs, reason, **kwargs)

    monkeypatch.setattr(sweeps.spine, "close_locked", close_but_fail_first)
    # The batch of three fails whole and is rolled back; row by row, only the bad run is left.
    assert sweeps.abort_idle_runs(later(601)) == 2
    assert stored_state(first["id"]) == "executing"
    assert stored_state(second["id"]) == stored_state(third["id"]) == "aborted"


def test_a_failing_approval_does_not_stop_the_expiry_of_the_others(api, monkeypatch):
    first = park(api, make_run(api, "executing")["id"])
    second = park(api, make_run(api, "executing")["id"])
    real_frames = expiry.decision_frames

    def frames_but_fail_first(approval):
        if str(approval.pk) == first["id"]:
            raise RuntimeError("boom")
        return real_frames(approval)

    monkeypatch.setattr(expiry, "decision_frames", frames_but_fail_first)
    assert expiry.expire_due(now=later(901)) == 1
    # The failing row was rolled back whole (not half expired); the next pass retries it.
    assert Approval.objects.get(pk=first["id"]).status == "pending"
    assert Approval.objects.get(pk=second["id"]).status == "expired"


def test_old_idempotency_records_are_pruned(ward_agent):
    old = IdempotencyRecord.objects.create(
        client=ward_agent, key="old", fingerprint="x", response_status=200, response_body={}
    )
    IdempotencyRecord.objects.create(
        client=ward_agent, key="new", fingerprint="y", response_status=200, response_body={}
    )
    IdempotencyRecord.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))
    assert idempotency.prune_expired(timezone.now()) == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]


def test_the_sweep_command_runs_one_pass(api, capsys):
    from django.core.management import call_command

    make_run(api, "executing")
    call_command("sweep")
    assert "runs_idle: 0" in capsys.readouterr().out
