"""The run state machine: exactly the edges of SPEC section 3, each reached through the real doors."""

import pytest

from runs.models import Run
from tests.helpers.approval_loop import decide, park, resume
from tests.helpers.runs import close, event_kinds, make_run, stored_state, transition

STATES = ["pending", "planning", "executing", "suspended", "completed", "failed", "aborted"]
# The only moves a client may ask for with POST runs/{id}/transition/ (SPEC section 3).
CLIENT_EDGES = {("pending", "planning"), ("pending", "executing"), ("planning", "executing")}
ILLEGAL_TRANSITIONS = [(src, dst) for src in STATES for dst in STATES if (src, dst) not in CLIENT_EDGES]


@pytest.mark.parametrize("src, dst", sorted(CLIENT_EDGES))
def test_client_may_move_along_a_legal_edge(api, src, dst):
    run = make_run(api, src)

    response = transition(api, run["id"], dst)

    assert response.status_code == 200, response.json()
    assert response.json()["state"] == dst
    assert stored_state(run["id"]) == dst


@pytest.mark.parametrize("src, dst", ILLEGAL_TRANSITIONS)
def test_illegal_transition_is_409_and_leaves_the_run_alone(api, src, dst):
    run = make_run(api, src)
    events_before = event_kinds(run["id"])

    response = transition(api, run["id"], dst)

    assert response.status_code == 409
    assert response.json()["error"] == "run_state_transition"
    assert stored_state(run["id"]) == src
    assert event_kinds(run["id"]) == events_before


def test_gated_high_tier_call_suspends_an_executing_run(api):
    run = make_run(api, "executing")

    approval = park(api, run["id"])

    assert approval["status"] == "pending"
    assert stored_state(run["id"]) == "suspended"


def test_resume_with_a_granted_approval_returns_the_run_to_executing(api, reviewer_http):
    run = make_run(api, "executing")
    approval = park(api, run["id"])
    assert decide(reviewer_http, approval["id"], {"approved": True}).status_code == 200

    response = resume(api, run["id"], approval["id"], approval["args"])

    assert response.status_code == 200, response.json()
    assert response.json()["run"]["state"] == "executing"
    assert stored_state(run["id"]) == "executing"


def test_schema_rejected_decision_fails_the_suspended_run(api, reviewer_http):
    run = make_run(api, "executing")
    approval = park(api, run["id"])

    response = decide(reviewer_http, approval["id"], {"approved": "yes, please"})

    assert response.status_code == 422
    assert response.json()["error"] == "resume_schema_rejected"
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason) == ("failed", "resume_schema_rejected")


def test_rejection_without_stop_returns_the_suspended_run_to_executing(api, reviewer_http):
    run = make_run(api, "executing")
    approval = park(api, run["id"])

    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": "Penicillin allergy."})

    assert response.status_code == 200
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason) == ("executing", "")


def test_rejection_with_stop_aborts_the_suspended_run(api, reviewer_http):
    run = make_run(api, "executing")
    approval = park(api, run["id"])

    response = decide(
        reviewer_http, approval["id"], {"approved": False, "reason": "Penicillin allergy.", "stop_run": True}
    )

    assert response.status_code == 200
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason) == ("aborted", "approval_denied")


@pytest.mark.parametrize("src", ["pending", "planning", "executing", "suspended"])
@pytest.mark.parametrize(
    "reason, terminal", [("completed", "completed"), ("tool_error", "failed"), ("user_stopped", "aborted")]
)
def test_close_ends_any_active_run_in_the_state_of_its_reason(api, src, reason, terminal):
    run = make_run(api, src)

    response = close(api, run["id"], reason)

    assert response.status_code == 200, response.json()
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason) == (terminal, reason)
    assert stored.closed_at is not None


def test_a_run_passes_several_approval_gates(api, reviewer_http):
    run = make_run(api, "executing")

    for dose in ("250 mg", "500 mg", "750 mg"):
        approval = park(api, run["id"], args={"drug": "amoxicillin", "dose": dose})
        assert stored_state(run["id"]) == "suspended"
        assert decide(reviewer_http, approval["id"], {"approved": True}).status_code == 200
        assert stored_state(run["id"]) == "suspended"  # a decision alone does not unpark the run
        response = resume(api, run["id"], approval["id"], approval["args"])
        assert response.status_code == 200, response.json()
        assert stored_state(run["id"]) == "executing"

    assert event_kinds(run["id"]).count("run.resumed") == 3
    assert close(api, run["id"], "completed").json()["state"] == "completed"


def test_a_consumed_approval_cannot_resume_the_run_twice(api, reviewer_http):
    run = make_run(api, "executing")
    approval = park(api, run["id"])
    decide(reviewer_http, approval["id"], {"approved": True})
    assert resume(api, run["id"], approval["id"], approval["args"]).status_code == 200

    replay = resume(api, run["id"], approval["id"], approval["args"])

    assert replay.status_code == 409
    assert replay.json()["error"] == "approval_consumed"
    assert stored_state(run["id"]) == "executing"


def test_state_cannot_be_assigned_around_the_machine(api):
    run = Run.objects.get(pk=make_run(api, "pending")["id"])

    with pytest.raises(AttributeError):
        run.state = "completed"
