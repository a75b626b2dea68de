"""Row locks on real PostgreSQL: the gate judges under the run lock, and every service takes
locks in one order (session, then run, then approvals), so none of them can deadlock another.

Each thread has its own database connection (Django's are per thread) and closes it when done.
"""

import threading

import pytest
from django.db import connection, transaction

from approvals import decisions
from approvals.gate import GateCall, gate_tool_call
from approvals.models import Approval
from approvals.results import report_result
from approvals.resume import resume
from audit import chain as audit_chain
from core.errors import CondorError
from runs import spine
from runs.models import Run
from runs.states import ACTIVE_STATES, TerminalReason
from sessions_app import lifecycle
from sessions_app.models import Session
from tests.helpers import races
from tests.helpers.approval_loop import PRESCRIPTION, gate, parked_run
from tests.helpers.races import backend_pid
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

EMAIL = {"host": "smtp.clinic.example", "to": "gp@example.org", "body": "Discharge letter attached."}


class Contender(threading.Thread):
    """Runs `work()` on its own connection; records its backend pid first and its outcome last."""

    def __init__(self, work):
        super().__init__()
        self.work, self.pid, self.outcome = work, None, None

    def run(self):
        try:
            self.pid = backend_pid()
            self.outcome = self.work()
        except CondorError as error:
            self.outcome = error.code
        except Exception as error:  # a deadlock or a 500 fails the assertions below, visibly
            self.outcome = repr(error)
        finally:
            connection.close()


def wait_until_queued(*threads: Contender) -> None:
    races.wait_until_queued(*(lambda thread=thread: thread.pid for thread in threads))


def prescription_call(tool_call_id: str, step_id: str) -> GateCall:
    """The prescription (PRESCRIPTION) gated again under these ids."""
    return GateCall(
        tool_call_id=tool_call_id,
        step_id=step_id,
        tool="prescribe_medication",
        op="create",
        args=PRESCRIPTION,
        metadata={},
    )


def active_runs(session_id) -> int:
    return Run.objects.filter(session_id=session_id, state__in=[s.value for s in ACTIVE_STATES]).count()


# --- the gate sees a taint committed while it waited ----------------------------------------------


def test_a_taint_committed_while_the_gate_waits_for_the_run_sees_no_allow(api, ward_agent):
    run_id = open_executing_run(api, autonomy="autonomous", consent=True, age_band="adult")
    # Untainted, this session's emails are allowed: only the taint can make the next one wait.
    first = gate(api, run_id, tool="send_email", op="send", args=EMAIL, tool_call_id="mail-1")
    assert first.json()["rule_id"] == "comms.autonomous-consented-allow"
    call = GateCall(tool_call_id="mail-2", step_id="step-2", tool="send_email", op="send", args=EMAIL, metadata={})

    def gate_b():
        result = gate_tool_call(Run.objects.get(pk=run_id), call, client=ward_agent)
        return result.status, result.body["rule_id"]

    b = Contender(gate_b)
    with transaction.atomic():
        # A holds the run (as a result report does) and taints the session inside that transaction.
        Run.objects.select_for_update().get(pk=run_id)
        assert Session.objects.get(runs__pk=run_id).mark_tainted()
        b.start()
        wait_until_queued(b)  # queued on the run's lock until A commits: it cannot judge before
        assert b.is_alive(), "the gate judged while the run was locked"
    b.join(timeout=10)
    assert b.outcome == (202, "taint.external-approval")


# --- a reviewer's decision and a supersede on the same parked run ---------------------------------


@pytest.fixture
def parked(api):
    """(session id, approval id) of a prescription parked on its session's only run."""
    run_id, approval = parked_run(api)
    return Run.objects.get(pk=run_id).session_id, approval["id"]


def decision_and_supersede(session_id, approval_id, rita, barrier=None):
    def approve():
        if barrier is not None:
            barrier.wait(timeout=10)
        return decisions.decide(approval_id, {"approved": True}, user=rita).status

    def supersede():
        session = Session.objects.get(pk=session_id)
        if barrier is not None:
            barrier.wait(timeout=10)
        return spine.open_run(session).state

    return Contender(approve), Contender(supersede)


def assert_both_finished_cleanly(decider, opener, session_id, approval_id):
    assert decider.outcome in ("approved", "approval_not_pending"), decider.outcome
    assert opener.outcome == "pending", opener.outcome
    assert active_runs(session_id) == 1
    expected = "approved" if decider.outcome == "approved" else "withdrawn"
    assert Approval.objects.get(pk=approval_id).status == expected


@pytest.mark.parametrize("round_", range(10))
def test_a_decision_racing_a_supersede_never_deadlocks(parked, rita, round_):
    session_id, approval_id = parked
    decider, opener = decision_and_supersede(session_id, approval_id, rita, threading.Barrier(2))
    for thread in (decider, opener):
        thread.start()
    for thread in (decider, opener):
        thread.join(timeout=30)
    assert not decider.is_alive() and not opener.is_alive()
    assert_both_finished_cleanly(decider, opener, session_id, approval_id)


def test_a_decision_queued_behind_the_approval_does_not_deadlock_the_supersede_behind_it(parked, rita):
    # Both queue at once: the decision holds the run while it waits for the approval, so the
    # supersede waits for the run with nothing the decision needs. Had the decision locked the
    # approval first and the run second, the supersede would hold the run and wait for the
    # approval: a cycle.
    session_id, approval_id = parked
    decider, opener = decision_and_supersede(session_id, approval_id, rita)
    with transaction.atomic():
        Approval.objects.select_for_update().get(pk=approval_id)
        decider.start()
        wait_until_queued(decider)
        opener.start()
        wait_until_queued(decider, opener)
    for thread in (decider, opener):
        thread.join(timeout=30)
    assert (decider.outcome, opener.outcome) == ("approved", "pending")
    assert_both_finished_cleanly(decider, opener, session_id, approval_id)


# --- a grant presented again waits for its own run -------------------------------------------------


@pytest.fixture
def granted(parked, rita):
    """(run id, approval id) of an approved grant its parked run has not used yet."""
    _, approval_id = parked
    assert decisions.decide(approval_id, {"approved": True}, user=rita).status == "approved"
    return Approval.objects.get(pk=approval_id).run_id, approval_id


def outcome_beside_a_stop(run_id, presenter: Contender, rita):
    """`presenter`'s outcome when it starts while a reviewer's stop holds the run, before the stop
    reaches the approvals (as spine.stop locks them), and must wait for the stop to commit."""
    with transaction.atomic():
        run = spine.lock_run(run_id)
        presenter.start()
        wait_until_queued(presenter)  # queued on the run's lock: it cannot answer before the stop commits
        spine.close_locked_run(
            run, TerminalReason.USER_STOPPED, actor_user=rita, withdraw_grants=True, stop_reason="wrong patient"
        )
    presenter.join(timeout=10)
    assert Run.objects.get(pk=run_id).terminal_reason == "user_stopped"
    return presenter.outcome


def test_a_cold_replay_waits_for_the_lock_on_the_grants_own_run(granted, rita, ward_agent):
    # The agent presents the grant again (a retry the Idempotency-Key cache does not answer)
    # while a reviewer stops its run. The replay locks that run first (session, run, approvals),
    # so it waits and then hears the stop's outcome. Were it to read or consume the grant without
    # the run, it would take the grant the stop is about to withdraw: the stop would wait on the
    # grant while the replay waits on the run to unpark it (a deadlock), or the stopped call runs.
    run_id, approval_id = granted

    def replay():
        approval, run = resume(run_id, approval_id, PRESCRIPTION, client=ward_agent, owned_by=ward_agent)
        return approval.status, run.state

    assert outcome_beside_a_stop(run_id, Contender(replay), rita) == "approval_withdrawn"
    assert Approval.objects.get(pk=approval_id).status == "withdrawn"


def test_a_cold_replay_at_the_gate_waits_for_the_lock_on_the_grants_own_run(granted, rita, ward_agent):
    # The same call gated again on the parked run would run on the grant (approval.prior-grant):
    # the gate locks the run before it reads the grants, so the stop withdraws the grant first.
    # A grant of an earlier run of the session needs no lock of its own run: that run has ended
    # (one active run a session), and only the consume's conditional UPDATE can still change it.
    run_id, approval_id = granted
    call = prescription_call("call-2", "step-2")

    def gate_again():
        return gate_tool_call(run_id, call, client=ward_agent, owned_by=ward_agent).body["rule_id"]

    assert outcome_beside_a_stop(run_id, Contender(gate_again), rita) == "run_not_active"
    assert Approval.objects.get(pk=approval_id).status == "withdrawn"


# --- a park's commit and the session's lock -------------------------------------------------------


def park_held_at_the_chain_head(run_id, ward_agent, other: Contender) -> Contender:
    """A prescription parked on `run_id` while `other` starts: the gate holds the run and queues on the
    session's audit chain head, held here, until `other` queues too; then both go on.

    The gate's approval INSERT names the session, and PostgreSQL checks that foreign key at COMMIT
    under a KEY SHARE lock on the session's row: `other`, which locks the session and then the
    run, must not lock the session in a mode that waits for that check, or each waits for the other.
    """
    call = prescription_call("park-1", "step-9")
    parker = Contender(lambda: gate_tool_call(run_id, call, client=ward_agent, owned_by=ward_agent).status)
    chain = audit_chain.chain_for(Run.objects.get(pk=run_id).session_id)
    with transaction.atomic():
        audit_chain.lock_head(chain)
        parker.start()
        wait_until_queued(parker)  # holds the run, waits for the head
        other.start()
        wait_until_queued(parker, other)  # `other` holds the session, waits for the run
    for thread in (parker, other):
        thread.join(timeout=30)
    assert not parker.is_alive() and not other.is_alive()
    return parker


def test_a_result_reported_while_a_call_parks_on_the_same_run_does_not_deadlock(api, ward_agent):
    # Parallel tool calls: the agent reports the first one's result while its second one parks.
    run_id = open_executing_run(api)
    assert gate(api, run_id, tool="get_patient_summary", op="", args={"patient_id": "p-1"}).status_code == 200

    def report():
        call, _ = report_result(
            run_id,
            "call-1",
            output={"ok": True},
            is_error=False,
            untrusted=False,
            entities=[],
            cards=[],
            client=ward_agent,
        )
        return call.reported_at is not None

    reporter = Contender(report)
    parker = park_held_at_the_chain_head(run_id, ward_agent, reporter)
    assert (parker.outcome, reporter.outcome) == (202, True)


def test_a_run_opened_while_a_call_parks_supersedes_it_without_deadlock(api, ward_agent):
    run_id = open_executing_run(api)
    session = Session.objects.get(runs__pk=run_id)
    opener = Contender(lambda: spine.open_run(session).state)
    parker = park_held_at_the_chain_head(run_id, ward_agent, opener)
    assert (parker.outcome, opener.outcome) == (202, "pending")
    assert Run.objects.get(pk=run_id).terminal_reason == TerminalReason.SUPERSEDED
    assert Approval.objects.get(run_id=run_id).status == "withdrawn"


def test_a_session_deleted_while_a_call_parks_does_not_deadlock(api, ward_agent):
    run_id = open_executing_run(api)
    session_id = Run.objects.get(pk=run_id).session_id
    deleter = Contender(lambda: lifecycle.delete_session(session_id, client=ward_agent) or "deleted")
    parker = park_held_at_the_chain_head(run_id, ward_agent, deleter)
    assert (parker.outcome, deleter.outcome) == (202, "deleted")
    assert Session.objects.get(pk=session_id).deleted_at is not None


# --- the gate holds its chain head from the run's lock on -----------------------------------------


def test_a_cold_replay_passes_over_a_grant_another_transaction_holds(granted, ward_agent):
    # The gate locks the session's audit chain head with its run, so it must not wait for a row
    # whose holder may wait for that head (a resume consuming the grant does): it passes the
    # grant over and parks the call on a card of its own, for a reviewer to decide again.
    run_id, approval_id = granted
    call = prescription_call("call-2", "step-2")
    replay = Contender(lambda: gate_tool_call(run_id, call, client=ward_agent, owned_by=ward_agent).status)
    with transaction.atomic():
        Approval.objects.select_for_update().get(pk=approval_id)
        replay.start()
        replay.join(timeout=10)
        assert not replay.is_alive(), "the replay waited for the grant's holder"
    assert replay.outcome == 202
    assert Approval.objects.get(pk=approval_id).status == "approved"
    assert Approval.objects.filter(run_id=run_id, tool_call_id="call-2", status="pending").exists()


def test_without_a_holder_the_cold_replay_uses_the_grant(granted, ward_agent):
    run_id, approval_id = granted
    call = prescription_call("call-2", "step-2")
    result = gate_tool_call(run_id, call, client=ward_agent, owned_by=ward_agent)
    assert (result.status, result.body["rule_id"]) == (200, "approval.prior-grant")
    assert Approval.objects.get(pk=approval_id).status == "consumed"
