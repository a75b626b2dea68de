"""Opening runs: one active run per session, and a new one supersedes the old."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from approvals.models import Approval
from runs import spine
from runs.models import Run, RunEvent
from sessions_app.models import Session
from tests.helpers.approval_loop import decide, park, resume
from tests.helpers.http import post
from tests.helpers.races import all_at_once
from tests.helpers.runs import make_run, make_session, open_run, stored_state, transition


def test_a_new_run_is_pending_with_the_session_autonomy(api):
    session = make_session(api, autonomy="autonomous")

    run = open_run(api, session["id"])

    assert (run["state"], run["autonomy"], run["session"]) == ("pending", "autonomous", session["id"])
    assert run["terminal_reason"] is None  # null while active (the schema says so)
    assert Run.objects.get(pk=run["id"]).last_activity_at is not None


def test_a_run_may_override_the_session_autonomy(api):
    session = make_session(api, autonomy="autonomous")

    run = open_run(api, session["id"], autonomy="ambient", flow_key="discharge", engine="gpt-x")

    assert (run["autonomy"], run["flow_key"], run["engine"]) == ("ambient", "discharge", "gpt-x")


@pytest.mark.parametrize("body", [{"autonomy": "reckless"}, {"state": "executing"}, {"flow_key": 7 * [1]}])
def test_bad_open_body_is_400_and_opens_nothing(api, body):
    session = make_session(api)

    response = post(api, f"/api/v1/sessions/{session['id']}/runs/", body)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
    assert not Run.objects.filter(session_id=session["id"]).exists()


def test_opening_a_run_supersedes_the_active_one(api):
    old = make_run(api, "executing")

    new = open_run(api, old["session"])

    stored = Run.objects.get(pk=old["id"])
    assert (stored.state, stored.terminal_reason) == ("aborted", "superseded")
    assert stored.closed_at is not None
    assert stored_state(new["id"]) == "pending"


def test_a_closed_run_is_not_superseded_again(api):
    old = make_run(api, "completed")

    open_run(api, old["session"])

    stored = Run.objects.get(pk=old["id"])
    assert (stored.state, stored.terminal_reason) == ("completed", "completed")


def test_the_201_names_the_run_it_superseded(api):
    old = make_run(api, "executing")

    new = open_run(api, old["session"])

    assert new["superseded_run"] == old["id"]


def test_the_201_names_no_run_when_none_was_active(api):
    old = make_run(api, "completed")

    assert open_run(api, old["session"])["superseded_run"] is None


def test_supersede_withdraws_the_pending_approvals_of_the_old_run(api):
    old = make_run(api, "executing")
    approval = park(api, old["id"])

    open_run(api, old["session"])

    assert Approval.objects.get(pk=approval["id"]).status == "withdrawn"
    assert api.get(f"/api/v1/approvals/{approval['id']}/").json()["status"] == "withdrawn"


def test_supersede_tells_the_inbox_the_card_was_withdrawn_and_why(api):
    old = make_run(api, "executing")
    approval = park(api, old["id"])

    open_run(api, old["session"])

    pushed = RunEvent.objects.get(run_id=old["id"], kind="approval.withdrawn").inbox
    assert (pushed["type"], pushed["id"], pushed["status"]) == ("card.removed", approval["id"], "withdrawn")
    assert (pushed["cause"], pushed["stopped_by"]) == ("superseded", None)


def test_supersede_leaves_a_granted_approval_consumable_in_the_session(api, reviewer_http):
    old = make_run(api, "executing")
    approval = park(api, old["id"])
    decide(reviewer_http, approval["id"], {"approved": True})

    new = open_run(api, old["session"])
    transition(api, new["id"], "executing")
    response = post(
        api,
        f"/api/v1/runs/{new['id']}/tool-calls/",
        {
            "tool_call_id": "call-again",
            "step_id": "step-again",
            "tool": approval["tool"],
            "op": "create",
            "args": approval["args"],
        },
    )

    assert response.status_code == 200, response.json()
    assert (response.json()["decision"], response.json()["rule_id"]) == ("allow", "approval.prior-grant")
    assert Approval.objects.get(pk=approval["id"]).status == "consumed"


def test_resuming_a_superseded_run_is_run_not_suspended(api, reviewer_http):
    old = make_run(api, "executing")
    approval = park(api, old["id"])
    decide(reviewer_http, approval["id"], {"approved": True})
    open_run(api, old["session"])

    response = resume(api, old["id"], approval["id"], approval["args"])

    assert response.status_code == 409
    assert response.json()["error"] == "run_not_suspended"
    assert stored_state(old["id"]) == "aborted"
    assert Approval.objects.get(pk=approval["id"]).status == "approved"


def test_the_database_refuses_a_second_active_run(api):
    first = make_run(api, "planning")

    with pytest.raises(IntegrityError), transaction.atomic():
        Run.objects.create(session_id=first["session"], autonomy="guarded", last_activity_at=timezone.now())


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_concurrent_opens_leave_exactly_one_active_run(ward_agent):
    session = Session.objects.create(client=ward_agent, title="Race")
    Run.objects.create(session=session, autonomy="guarded", last_activity_at=timezone.now())
    opened = [run.pk for run in all_at_once([lambda: spine.open_run(session)] * 2)]

    runs = Run.objects.filter(session=session)
    assert runs.count() == 3
    active = [run for run in runs if run.is_active]
    assert len(active) == 1 and active[0].pk in opened
    assert sorted(run.terminal_reason for run in runs if not run.is_active) == ["superseded", "superseded"]
