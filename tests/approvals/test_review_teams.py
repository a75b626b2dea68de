"""Review teams (SPEC section 10): a reviewer sees, and acts on, only the cards of their wards.

With no team every reviewer sees every card. Once a team exists a card goes to the
teams listing its session's care_unit; a unit no team lists goes to the default
team, or to every reviewer without one. An invisible card is 404 on every path a
reviewer reads or acts through: the inbox snapshot (polling), the approval fetch,
the decision, the claim and its release, and the stop. (The websocket: tests/live/test_inbox_socket_teams.py.)
"""

import pytest
from django.core.exceptions import ValidationError

from approvals import cards
from approvals.models import Approval, ApprovalStatus, ReviewTeam
from approvals.visibility import pending_approvals, reviewer_scope
from audit.models import AuditEvent
from sessions_app.models import CARE_UNIT_MAX_LENGTH, Session
from sessions_app.serializers import SessionCreateSerializer, SessionUpdateSerializer
from tests.helpers.approval_loop import approval_row, decide, suspend
from tests.helpers.http import post_json
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run, run_state

CARDS = "/api/v1/inbox/cards/"


def team(name: str, units: list[str], *members, default: bool = False) -> ReviewTeam:
    created = ReviewTeam.objects.create(name=name, care_units=units, is_default=default)
    created.members.set(members)
    return created


def park_in(api, care_unit: str) -> dict:
    return suspend(api, open_executing_run(api, care_unit=care_unit))


def release(http, approval_id):
    return http.delete(f"/api/v1/approvals/{approval_id}/claim/", HTTP_X_CSRFTOKEN=http.cookies["csrftoken"].value)


def inbox_ids(http) -> set[str]:
    response = http.get(CARDS)
    assert response.status_code == 200, response.content
    return {card["id"] for card in response.json()["cards"]}


@pytest.fixture
def rob_http(rob):
    return logged_in(rob)


@pytest.fixture
def wards(rita, rob):
    """rita works the ICU, rob cardiology."""
    return team("ICU", ["ICU"], rita), team("Cardiology", ["CARDIO"], rob)


def test_a_session_carries_its_care_unit(api):
    created = api.post("/api/v1/sessions/", {"care_unit": "ICU"}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["care_unit"] == "ICU"


def test_a_care_unit_of_64_characters_is_the_longest_on_create_and_patch(api):
    longest, too_long = "U" * 64, "U" * 65
    created = api.post("/api/v1/sessions/", {"care_unit": longest}, format="json")
    assert (created.status_code, created.json()["care_unit"]) == (201, longest)
    refused = api.post("/api/v1/sessions/", {"care_unit": too_long}, format="json")
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_payload")
    assert Session.objects.count() == 1

    patched = api.patch(f"/api/v1/sessions/{created.json()['id']}/", {"care_unit": too_long}, format="json")

    assert (patched.status_code, patched.json()["error"]) == (400, "invalid_payload")
    assert Session.objects.get().care_unit == longest


def test_the_column_the_api_and_the_teams_share_one_care_unit_limit():
    assert Session._meta.get_field("care_unit").max_length == CARE_UNIT_MAX_LENGTH == 64
    for serializer in (SessionCreateSerializer, SessionUpdateSerializer):
        assert serializer().fields["care_unit"].max_length == CARE_UNIT_MAX_LENGTH
    ReviewTeam(name="ICU", care_units=["U" * CARE_UNIT_MAX_LENGTH]).clean()
    with pytest.raises(ValidationError, match="each 1 to 64 characters"):
        ReviewTeam(name="ICU", care_units=["U" * (CARE_UNIT_MAX_LENGTH + 1)]).clean()


def test_without_teams_every_reviewer_sees_every_card(api, reviewer_http, rob_http):
    icu, cardio = park_in(api, "ICU")["id"], park_in(api, "CARDIO")["id"]
    assert inbox_ids(reviewer_http) == inbox_ids(rob_http) == {icu, cardio}


def test_a_card_goes_to_the_team_listing_its_unit(api, wards, reviewer_http, rob_http):
    icu, cardio = park_in(api, "ICU")["id"], park_in(api, "CARDIO")["id"]
    assert inbox_ids(reviewer_http) == {icu}
    assert inbox_ids(rob_http) == {cardio}


def test_the_card_carries_its_care_unit(api, wards, reviewer_http):
    park_in(api, "ICU")
    assert reviewer_http.get(CARDS).json()["cards"][0]["session"]["care_unit"] == "ICU"


def test_an_unlisted_unit_goes_to_every_reviewer_without_a_default_team(api, wards, reviewer_http, rob_http):
    unrouted = park_in(api, "ER")["id"]
    assert unrouted in inbox_ids(reviewer_http) and unrouted in inbox_ids(rob_http)


def test_an_unlisted_unit_goes_to_the_default_team(api, rita, rob, reviewer_http, rob_http):
    team("ICU", ["ICU"], rita)
    team("Triage", [], rob, default=True)
    unrouted, no_unit = park_in(api, "ER")["id"], park_in(api, "")["id"]
    assert inbox_ids(rob_http) == {unrouted, no_unit}
    assert inbox_ids(reviewer_http) == set()


def test_a_member_of_two_teams_sees_both_units(api, rita, rob, reviewer_http):
    team("ICU", ["ICU"], rita)
    team("Cardiology", ["CARDIO"], rob, rita)
    both = {park_in(api, "ICU")["id"], park_in(api, "CARDIO")["id"]}
    assert inbox_ids(reviewer_http) == both


@pytest.mark.parametrize("with_default", [False, True])
def test_the_query_and_the_push_filter_agree(api, wards, rita, rob, with_default):
    if with_default:
        team("Triage", [], rob, default=True)
    for unit in ("ICU", "CARDIO", "ER", ""):
        park_in(api, unit)
    everything = cards.cards_for(Approval.objects.filter(status=ApprovalStatus.PENDING))
    for user in (rita, rob):
        scope = reviewer_scope(user)
        shown = {card["id"] for card in cards.cards_for(pending_approvals(scope))}
        assert shown == {card["id"] for card in everything if scope.can_see(card)}
        assert shown and len(shown) < 4


def test_an_invisible_approval_is_404_to_fetch(api, wards, rob_http, reviewer_http):
    approval = park_in(api, "ICU")["id"]
    assert rob_http.get(f"/api/v1/approvals/{approval}/").status_code == 404
    assert reviewer_http.get(f"/api/v1/approvals/{approval}/").status_code == 200


def test_an_invisible_approval_is_404_to_decide_and_changes_nothing(api, wards, rob_http):
    approval = park_in(api, "ICU")["id"]
    response = decide(rob_http, approval, {"approved": True})
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert approval_row(approval).status == ApprovalStatus.PENDING


def test_an_invisible_approval_is_404_to_claim(api, wards, rob_http):
    approval = park_in(api, "ICU")["id"]
    assert post_json(rob_http, f"/api/v1/approvals/{approval}/claim/", {}).status_code == 404
    assert approval_row(approval).claimed_by_id is None


def test_an_invisible_approval_is_404_to_release_whoever_holds_it(api, wards, rob_http, reviewer_http):
    approval = park_in(api, "ICU")["id"]
    assert release(rob_http, approval).status_code == 404  # not 204: there is nothing here for rob
    assert post_json(reviewer_http, f"/api/v1/approvals/{approval}/claim/", {}).status_code == 200
    refused = release(rob_http, approval)
    assert (refused.status_code, refused.json()["error"]) == (404, "not_found")  # not 409 naming rita
    assert approval_row(approval).claimed_by.username == "rita"


def test_a_reviewer_cannot_stop_a_run_they_cannot_see(api, wards, rob_http, reviewer_http):
    run_id = open_executing_run(api, care_unit="ICU")
    suspend(api, run_id)
    refused = post_json(rob_http, f"/api/v1/runs/{run_id}/stop/", {"reason": "Not mine."})
    assert refused.status_code == 404
    assert run_state(run_id) == ("suspended", "")
    stopped = post_json(reviewer_http, f"/api/v1/runs/{run_id}/stop/", {"reason": "Wrong patient."})
    assert stopped.status_code == 200, stopped.content


def test_the_agent_still_fetches_its_own_approval(api, wards):
    approval = park_in(api, "ICU")["id"]
    assert api.get(f"/api/v1/approvals/{approval}/").status_code == 200


# ------------------------------------------------------------------ the admin


def test_governance_edits_a_team_in_the_admin_and_it_is_audited(gina, rita):
    admin = logged_in(gina)
    response = admin.post(
        "/admin/approvals/reviewteam/add/",
        {
            "name": "ICU",
            "care_units": '["ICU"]',
            "members": [rita.pk],
            "csrfmiddlewaretoken": admin.cookies["csrftoken"].value,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    created = ReviewTeam.objects.get(name="ICU")
    assert list(created.members.all()) == [rita]
    row = AuditEvent.objects.get(kind="review_team")
    assert (row.actor, row.decision) == ("user:gina", "created")
    assert row.data["after"] == {"name": "ICU", "care_units": ["ICU"], "is_default": False, "members": ["rita"]}


def test_governance_deleting_a_team_is_audited(gina, rita):
    doomed = team("ICU", ["ICU"], rita)
    admin = logged_in(gina)
    response = admin.post(
        f"/admin/approvals/reviewteam/{doomed.pk}/delete/",
        {"post": "yes", "csrfmiddlewaretoken": admin.cookies["csrftoken"].value},
    )
    assert response.status_code == 302
    row = AuditEvent.objects.get(kind="review_team")
    assert (row.decision, row.data["before"]["members"], row.data["after"]) == ("deleted", ["rita"], None)


def test_deleting_teams_from_the_list_audits_each_one(gina, rita):
    doomed = [team("ICU", ["ICU"], rita), team("Ward 4", ["ward4"], rita)]
    admin = logged_in(gina)
    response = admin.post(
        "/admin/approvals/reviewteam/",
        {
            "action": "delete_selected",
            "post": "yes",
            "_selected_action": [str(t.pk) for t in doomed],
            "csrfmiddlewaretoken": admin.cookies["csrftoken"].value,
        },
    )
    assert response.status_code == 302
    assert not ReviewTeam.objects.exists()
    assert sorted(
        (row.decision, row.data["before"]["name"]) for row in AuditEvent.objects.filter(kind="review_team")
    ) == [("deleted", "ICU"), ("deleted", "Ward 4")]


def test_compliance_reads_teams_but_cannot_change_them(carl, rita):
    existing = team("ICU", ["ICU"], rita)
    admin = logged_in(carl)
    assert admin.get(f"/admin/approvals/reviewteam/{existing.pk}/change/").status_code == 200
    refused = admin.post(
        f"/admin/approvals/reviewteam/{existing.pk}/change/",
        {"name": "Mine", "care_units": "[]", "csrfmiddlewaretoken": admin.cookies["csrftoken"].value},
    )
    assert refused.status_code == 403
    assert admin.get("/admin/approvals/reviewteam/add/").status_code == 403
    assert ReviewTeam.objects.get().name == "ICU"


def test_a_bad_care_unit_list_is_refused(gina):
    admin = logged_in(gina)
    response = admin.post(
        "/admin/approvals/reviewteam/add/",
        {"name": "ICU", "care_units": '["ICU", 7]', "csrfmiddlewaretoken": admin.cookies["csrftoken"].value},
    )
    assert response.status_code == 200 and b"Care units must be a list" in response.content
    assert not ReviewTeam.objects.exists()


def test_a_care_unit_list_nested_past_the_limit_is_a_form_error(gina):
    admin = logged_in(gina)
    response = admin.post(
        "/admin/approvals/reviewteam/add/",
        {"name": "ICU", "care_units": "[" * 2000 + "]" * 2000, "csrfmiddlewaretoken": admin.cookies["csrftoken"].value},
    )
    assert response.status_code == 200 and b"nested deeper than" in response.content
    assert not ReviewTeam.objects.exists()


def test_only_one_team_is_the_default(gina, rita):
    team("Triage", [], rita, default=True)
    admin = logged_in(gina)
    response = admin.post(
        "/admin/approvals/reviewteam/add/",
        {
            "name": "Nights",
            "care_units": "[]",
            "is_default": "on",
            "csrfmiddlewaretoken": admin.cookies["csrftoken"].value,
        },
    )
    assert response.status_code == 200 and b"already the default team" in response.content


# ------------------------------------------------------------------ the dashboard


def test_the_dashboard_counts_unrouted_cards(api, wards, gina):
    park_in(api, "ER")
    park_in(api, "ICU")
    page = logged_in(gina).get("/admin/").content.decode()
    assert '<td id="condor-unrouted">1 — every reviewer sees these' in page


def test_with_a_default_team_nothing_is_unrouted(api, wards, gina, rob):
    team("Triage", [], rob, default=True)
    park_in(api, "ER")
    assert '<td id="condor-unrouted">0</td>' in logged_in(gina).get("/admin/").content.decode()


def test_without_teams_the_dashboard_says_nothing_of_routing(api, gina):
    park_in(api, "ER")
    assert "condor-unrouted" not in logged_in(gina).get("/admin/").content.decode()
