"""GET /api/v1/inbox/decided/: the inbox's "Decided" view (SPEC section 10).

The last 24 h of decisions the reviewer can see, newest first, searchable by
patient_ref, each with args, edits, who, when and what the run did next.
"""

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import Approval, ReviewTeam
from tests.helpers.approval_loop import PRESCRIPTION, approve, decide, report, resume, suspend
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run

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


def outcome_of(http, approval_id) -> tuple:
    [row] = [row for row in decided(http) if row["id"] == approval_id]
    return row["call_outcome"], row["call_outcome_at"]


def test_decided_says_what_became_of_the_approved_call(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)["id"]
    approve(reviewer_http, approval)
    row = Approval.objects.get(pk=approval)
    assert outcome_of(reviewer_http, approval) == ("waiting", row.expires_at.isoformat().replace("+00:00", "Z"))

    assert resume(api, run_id, approval).status_code == 200
    outcome, at = outcome_of(reviewer_http, approval)
    assert (outcome, at is not None) == ("running", True)

    assert report(api, run_id, "call-1", {"prescription_id": "rx-1"}).status_code == 200
    assert outcome_of(reviewer_http, approval)[0] == "ran"


def test_a_call_that_reported_an_error_failed(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)["id"]
    approve(reviewer_http, approval)
    assert resume(api, run_id, approval).status_code == 200
    assert report(api, run_id, "call-1", {"error": "pharmacy offline"}, is_error=True).status_code == 200
    assert outcome_of(reviewer_http, approval)[0] == "failed"


def test_an_unused_approval_is_withdrawn_or_expired_and_a_rejection_has_no_outcome(api, reviewer_http):
    withdrawn, expired, rejected = (park(api) for _ in range(3))
    for approval in (withdrawn, expired):
        approve(reviewer_http, approval)
    decide(reviewer_http, rejected, {"approved": False, "reason": "Duplicate."})
    Approval.objects.filter(pk=withdrawn).update(status="withdrawn")
    Approval.objects.filter(pk=expired).update(expires_at=Approval.objects.get(pk=expired).decided_at)

    assert outcome_of(reviewer_http, withdrawn) == ("withdrawn", None)
    assert outcome_of(reviewer_http, expired)[0] == "expired"
    assert outcome_of(reviewer_http, rejected) == (None, None)


def test_the_outcomes_cost_no_query_per_decision(api, reviewer_http):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            decided(reviewer_http)
        return len(captured)

    approve(reviewer_http, park(api))
    one = queries()
    for _ in range(3):
        approve(reviewer_http, park(api))
    assert queries() == one


def test_a_search_past_a_refs_length_is_refused(api, reviewer_http):
    approve(reviewer_http, park(api, patient_ref="MRN-1"))
    assert [row["patient_ref"] for row in decided(reviewer_http, patient_ref="M" * 120)] == []
    response = reviewer_http.get(URL, {"patient_ref": "M" * 121})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
