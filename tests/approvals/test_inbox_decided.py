"""GET /api/v1/inbox/decided/: the inbox's "Decided" view (SPEC section 10).

The last 24 h of decisions the reviewer can see, newest first, searchable by
patient_ref, each with args, edits, who, when and what the run did next.
"""

from datetime import timedelta

from approvals.models import Approval, ReviewTeam
from tests.helpers.approval_loop import PRESCRIPTION, approve, decide, suspend
from tests.helpers.runs import open_executing_run
from tests.helpers.personas import logged_in

URL = "/api/v1/inbox/decided/"


def decided(http, **params) -> list[dict]:
    response = http.get(URL, params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def park(api, **session) -> str:
    return suspend(api, open_executing_run(api, **session))["id"]


def test_a_decision_shows_with_its_edit_who_and_what_the_run_did(api, reviewer_http):
    approval = park(api, patient_ref="MRN-1")
    approve(reviewer_http, approval, edited_args={**PRESCRIPTION, "dose": "250 mg"})
    [row] = decided(reviewer_http)
    assert (row["id"], row["patient_ref"], row["decided_by"], row["status"]) == (approval, "MRN-1", "rita", "approved")
    assert row["edited"] is True and row["approved_args"]["dose"] == "250 mg" and row["args"] == PRESCRIPTION
    assert (row["run_state"], row["run_terminal_reason"]) == ("suspended", "")


def test_newest_first_and_pending_or_expired_cards_are_not_decisions(api, reviewer_http):
    first, second, pending, expired = (park(api) for _ in range(4))
    approve(reviewer_http, first)
    decide(reviewer_http, second, {"approved": False, "reason": "Duplicate."})
    Approval.objects.filter(pk=expired).update(status="expired", decided_at=Approval.objects.get(pk=first).decided_at)
    assert [row["id"] for row in decided(reviewer_http)] == [second, first]


def test_searchable_by_patient_ref(api, reviewer_http):
    mine, other = park(api, patient_ref="MRN-1042"), park(api, patient_ref="MRN-77")
    approve(reviewer_http, mine)
    approve(reviewer_http, other)
    assert [row["id"] for row in decided(reviewer_http, patient_ref="mrn-104")] == [mine]


def test_only_the_last_24_hours(api, reviewer_http):
    old = park(api)
    approve(reviewer_http, old)
    row = Approval.objects.get(pk=old)
    Approval.objects.filter(pk=old).update(decided_at=row.decided_at - timedelta(hours=25))
    assert decided(reviewer_http) == []


def test_only_what_the_reviewer_can_see(api, rita, rob, reviewer_http):
    ReviewTeam.objects.create(name="ICU", care_units=["ICU"]).members.set([rita])
    ReviewTeam.objects.create(name="Cardiology", care_units=["CARDIO"]).members.set([rob])
    icu = park(api, care_unit="ICU")
    approve(reviewer_http, icu)
    assert decided(logged_in(rob)) == []
    assert [row["id"] for row in decided(reviewer_http)] == [icu]


def test_an_api_key_is_refused(api):
    assert api.get(URL).status_code == 403
