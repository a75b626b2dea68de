"""Claims hold everywhere (SPEC section 10).

Nobody ends a card another reviewer holds a live claim on: not by deciding it, nor
by stopping its run (409 approval_claimed, nothing changed). A claim whose holder can
no longer see the card (its session moved to another care unit, a team edit, the
holder left the reviewers) is void at once: released, audited and pushed, so the
reviewers who now see the card can take it without waiting for the claim to run out.
"""

import pytest
from django.contrib.auth.models import Group

from approvals.models import ReviewTeam
from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import approval_row, decide, park, suspend
from tests.helpers.http import post_json
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run, run_state


@pytest.fixture
def rob_http(rob):
    return logged_in(rob)


def claim(http, approval_id):
    return post_json(http, f"/api/v1/approvals/{approval_id}/claim/", {})


def stop(http, run_id):
    return post_json(http, f"/api/v1/runs/{run_id}/stop/", {"reason": "Patient transferred."})


# ------------------------------------------------------------------ ending a run under a claim


def test_a_stop_is_refused_while_another_reviewer_holds_a_card_of_the_run(api, reviewer_http, rob_http):
    run_id = open_executing_run(api)
    held = park(api, run_id)
    assert claim(rob_http, held["id"]).status_code == 200

    refused = stop(reviewer_http, run_id)

    assert (refused.status_code, refused.json()["error"]) == (409, "approval_claimed")
    assert "rob" in refused.json()["detail"]
    assert run_state(run_id) == ("suspended", "")
    row = approval_row(held["id"])
    assert (row.status, row.claimed_by.username) == ("pending", "rob")
    assert not AuditEvent.objects.filter(run_id=run_id, kind="run_close").exists()


def test_the_holder_may_stop_the_run_of_the_card_they_hold(api, reviewer_http):
    run_id = open_executing_run(api)
    held = park(api, run_id)
    claim(reviewer_http, held["id"])

    assert stop(reviewer_http, run_id).status_code == 200
    assert approval_row(held["id"]).status == "withdrawn"


def test_a_rejection_that_stops_the_run_is_refused_while_another_holds_a_sibling(api, reviewer_http, rob_http):
    run_id = open_executing_run(api)
    target, held = park(api, run_id), park(api, run_id)
    claim(rob_http, held["id"])

    refused = decide(reviewer_http, target["id"], {"approved": False, "reason": "Wrong drug.", "stop_run": True})

    assert (refused.status_code, refused.json()["error"]) == (409, "approval_claimed")
    assert (approval_row(target["id"]).status, approval_row(held["id"]).status) == ("pending", "pending")
    assert run_state(run_id) == ("suspended", "")


def test_a_rejection_without_stop_does_not_ask_about_the_siblings(api, reviewer_http, rob_http):
    run_id = open_executing_run(api)
    target, held = park(api, run_id), park(api, run_id)
    claim(rob_http, held["id"])

    assert decide(reviewer_http, target["id"], {"approved": False, "reason": "Wrong drug."}).status_code == 200
    assert approval_row(held["id"]).claimed_by.username == "rob"


# ------------------------------------------------------------------ a holder who can no longer see the card


@pytest.fixture
def wards(rita, rob):
    """rita works the ICU, rob cardiology."""
    icu = ReviewTeam.objects.create(name="ICU", care_units=["ICU"])
    icu.members.set([rita])
    ReviewTeam.objects.create(name="Cardiology", care_units=["CARDIO"]).members.set([rob])
    return icu


@pytest.fixture
def held_in_icu(api, wards, reviewer_http) -> dict:
    """An ICU card rita has claimed."""
    approval = suspend(api, open_executing_run(api, care_unit="ICU"))
    assert claim(reviewer_http, approval["id"]).status_code == 200
    return approval


def move(api, approval, care_unit):
    session_id = approval_row(approval["id"]).session_id
    response = api.patch(f"/api/v1/sessions/{session_id}/", {"care_unit": care_unit}, format="json")
    assert response.status_code == 200, response.content


def test_moving_the_session_voids_the_claim_and_the_new_wards_reviewer_claims_at_once(api, held_in_icu, rob_http):
    move(api, held_in_icu, "CARDIO")

    assert approval_row(held_in_icu["id"]).claimed_by is None
    taken = claim(rob_http, held_in_icu["id"])
    assert (taken.status_code, taken.json()["claimed_by"]) == (200, "rob")


def test_the_voided_claim_is_audited_with_its_holder_and_cause(api, held_in_icu):
    move(api, held_in_icu, "CARDIO")

    row = AuditEvent.objects.get(kind="claim", decision="voided")
    assert (row.actor, row.approval_id.hex, row.data) == (
        "client:ward-agent",
        held_in_icu["id"].replace("-", ""),
        {"holder": "rita", "cause": "care unit changed", "care_unit": "CARDIO"},
    )


def test_the_voided_claim_is_pushed_as_an_unclaimed_card(api, held_in_icu):
    move(api, held_in_icu, "CARDIO")

    pushed = RunEvent.objects.get(kind="approval.claim_voided").inbox
    assert (pushed["type"], pushed["card"]["id"], pushed["card"]["claimed_by"]) == (
        "card.updated",
        held_in_icu["id"],
        None,
    )
    assert pushed["card"]["session"]["care_unit"] == "CARDIO"  # the new ward's inboxes take it


def test_a_move_the_holder_still_sees_keeps_the_claim(api, held_in_icu, wards):
    wards.care_units = ["ICU", "ICU-2"]
    wards.save()

    move(api, held_in_icu, "ICU-2")

    assert approval_row(held_in_icu["id"]).claimed_by.username == "rita"
    assert not AuditEvent.objects.filter(kind="claim", decision="voided").exists()


def test_leaving_the_team_voids_the_claim(held_in_icu, wards, rita, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        wards.members.remove(rita)

    assert approval_row(held_in_icu["id"]).claimed_by is None
    assert AuditEvent.objects.get(kind="claim", decision="voided").actor == "visibility"


def test_a_team_edit_routing_the_unit_to_another_team_voids_the_claim(
    held_in_icu, wards, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        ReviewTeam.objects.filter(name="Cardiology").update(care_units=["CARDIO", "ICU"])
        wards.care_units = ["ICU-2"]
        wards.save()

    assert approval_row(held_in_icu["id"]).claimed_by is None


def test_leaving_the_reviewers_voids_the_claim(held_in_icu, rita, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        rita.groups.remove(Group.objects.get(name="reviewers"))

    assert approval_row(held_in_icu["id"]).claimed_by is None


def test_a_deactivated_holder_loses_the_claim(held_in_icu, rita, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        rita.is_active = False
        rita.save()

    assert approval_row(held_in_icu["id"]).claimed_by is None


def test_a_team_edit_that_keeps_the_holders_view_keeps_the_claim(
    held_in_icu, wards, rob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        wards.members.add(rob)
        wards.name = "Intensive care"
        wards.save()

    assert approval_row(held_in_icu["id"]).claimed_by.username == "rita"
