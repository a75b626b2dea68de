"""Renaming, re-linking and deleting a session; the list's filters."""

import datetime

import pytest
from django.utils import timezone

from approvals.models import Approval
from audit.models import AuditEvent
from runs.models import Run
from sessions_app.models import Session
from tests.helpers.approval_loop import approve, parked_run, resume
from tests.helpers.http import error_of, post
from tests.helpers.runs import close, make_run, make_session, open_run


def patch(api, session_id, body):
    return api.patch(f"/api/v1/sessions/{session_id}/", body, format="json")


def test_patch_renames_and_relinks(api, ward_agent):
    session = make_session(api, title="Bed 4", patient_ref="MRN-1")

    response = patch(api, session["id"], {"title": "Bed 5", "patient_ref": "MRN-2", "care_unit": "ICU"})

    assert response.status_code == 200
    assert {k: response.json()[k] for k in ("title", "patient_ref", "care_unit")} == {
        "title": "Bed 5",
        "patient_ref": "MRN-2",
        "care_unit": "ICU",
    }
    stored = Session.objects.get(pk=session["id"])
    assert (stored.title, stored.patient_ref, stored.care_unit) == ("Bed 5", "MRN-2", "ICU")


def test_a_relink_is_audited_with_the_old_and_new_patient(api):
    session = make_session(api, patient_ref="MRN-1")

    patch(api, session["id"], {"patient_ref": "MRN-2"})

    row = AuditEvent.objects.get(kind="session_change")
    assert (row.actor, row.decision, row.patient_ref) == ("client:ward-agent", "updated", "MRN-2")
    assert row.data == {"changed": {"patient_ref": {"from": "MRN-1", "to": "MRN-2"}}}


def test_a_patch_that_changes_nothing_writes_nothing(api):
    session = make_session(api, title="Same")

    assert patch(api, session["id"], {"title": "Same"}).status_code == 200
    assert not AuditEvent.objects.filter(kind="session_change").exists()


@pytest.mark.parametrize(
    "body", [{"autonomy": "autonomous"}, {"consent": True}, {"title": "x" * 201}, {"patient_ref": None}]
)
def test_patch_refuses_what_it_may_not_change(api, body):
    session = make_session(api, title="Kept")

    response = patch(api, session["id"], body)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
    assert Session.objects.get(pk=session["id"]).title == "Kept"


# --- a session's patient is bound to its open approvals (SPEC section 4) ---------------------------


def parked_for(api, patient_ref="MRN-ALICE") -> tuple[str, dict]:
    """(session id, approval) of a prescription parked in a session for `patient_ref`."""
    run_id, approval = parked_run(api, {"patient_ref": patient_ref, "age_band": "adult"})
    return str(Run.objects.get(pk=run_id).session_id), approval


def test_a_relink_with_a_pending_approval_is_refused_and_changes_nothing(api, catalog):
    session_id, _ = parked_for(api)

    response = patch(api, session_id, {"patient_ref": "MRN-BOB"})

    assert error_of(response) == (409, "session_has_open_approvals")
    assert Session.objects.get(pk=session_id).patient_ref == "MRN-ALICE"
    assert not AuditEvent.objects.filter(kind="session_change").exists()


def test_a_relink_with_an_approved_unused_approval_is_refused(api, catalog, reviewer_http):
    session_id, approval = parked_for(api)
    approve(reviewer_http, approval["id"])

    assert error_of(patch(api, session_id, {"patient_ref": "MRN-BOB"})) == (409, "session_has_open_approvals")
    assert Session.objects.get(pk=session_id).patient_ref == "MRN-ALICE"


def test_a_relink_is_allowed_once_the_approval_was_used(api, catalog, reviewer_http):
    session_id, approval = parked_for(api)
    approve(reviewer_http, approval["id"])
    assert resume(api, approval["run"], approval["id"]).status_code == 200

    assert patch(api, session_id, {"patient_ref": "MRN-BOB"}).status_code == 200
    assert Session.objects.get(pk=session_id).patient_ref == "MRN-BOB"


def test_a_relink_is_allowed_once_the_approval_is_past_its_deadline(api, catalog):
    session_id, approval = parked_for(api)
    Approval.objects.filter(pk=approval["id"]).update(expires_at=timezone.now() - datetime.timedelta(seconds=1))

    assert patch(api, session_id, {"patient_ref": "MRN-BOB"}).status_code == 200


def test_a_rename_or_a_ward_move_with_open_approvals_is_allowed(api, catalog):
    session_id, _ = parked_for(api)

    response = patch(api, session_id, {"title": "Bed 9", "care_unit": "ICU", "patient_ref": "MRN-ALICE"})

    assert response.status_code == 200
    stored = Session.objects.get(pk=session_id)
    assert (stored.title, stored.care_unit, stored.patient_ref) == ("Bed 9", "ICU", "MRN-ALICE")


def test_another_client_can_neither_patch_nor_delete(api, other_api):
    session = make_session(api, title="Mine")

    assert patch(other_api, session["id"], {"title": "Theirs"}).status_code == 404
    assert other_api.delete(f"/api/v1/sessions/{session['id']}/").status_code == 404
    stored = Session.objects.get(pk=session["id"])
    assert (stored.title, stored.deleted_at) == ("Mine", None)


def test_delete_stops_the_active_run_and_withdraws_its_pending_approvals(api, catalog):
    run = make_run(api, "suspended")
    session_id = run["session"]

    response = api.delete(f"/api/v1/sessions/{session_id}/")

    assert response.status_code == 204
    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason) == ("aborted", "user_stopped")
    assert list(Approval.objects.filter(run_id=run["id"]).values_list("status", flat=True)) == ["withdrawn"]
    close_row = AuditEvent.objects.get(kind="run_close", run_id=run["id"])
    assert close_row.actor == "client:ward-agent"
    assert AuditEvent.objects.get(kind="session_change", decision="deleted").data == {"stopped_run": run["id"]}


def test_after_delete_the_session_and_its_runs_are_404_but_the_audit_log_keeps_every_row(api, catalog):
    run = make_run(api, "suspended")
    session_id = run["session"]
    rows_before = AuditEvent.objects.count()

    api.delete(f"/api/v1/sessions/{session_id}/")

    for path in (f"/api/v1/sessions/{session_id}/", f"/api/v1/runs/{run['id']}/"):
        assert api.get(path).status_code == 404
    assert api.delete(f"/api/v1/sessions/{session_id}/").status_code == 404
    assert post(api, f"/api/v1/sessions/{session_id}/runs/").status_code == 404
    assert session_id not in [row["id"] for row in api.get("/api/v1/sessions/").json()["results"]]
    assert AuditEvent.objects.count() > rows_before  # nothing removed, the close and delete added
    assert AuditEvent.objects.filter(session_id=session_id, kind="suspend").exists()


def test_a_run_cannot_open_in_a_session_deleted_after_the_lookup(api):
    from core.errors import NotFound
    from runs import spine

    session = Session.objects.get(pk=make_session(api)["id"])
    Session.objects.filter(pk=session.pk).update(deleted_at=timezone.now())

    with pytest.raises(NotFound):
        spine.open_run(session)
    assert not Run.objects.exists()


def test_deleting_a_session_without_runs(api):
    session = make_session(api)

    assert api.delete(f"/api/v1/sessions/{session['id']}/").status_code == 204
    assert Session.objects.get(pk=session["id"]).deleted_at is not None


@pytest.fixture
def three_sessions(api):
    icu = make_session(api, title="ICU night round", patient_ref="MRN-1", care_unit="ICU")
    ward = make_session(api, title="Ward morning", patient_ref="MRN-2", care_unit="Ward 3")
    idle = make_session(api, title="Idle", care_unit="Ward 3")
    open_run(api, icu["id"])
    closed = open_run(api, ward["id"])
    close(api, closed["id"], "completed")
    return icu, ward, idle


@pytest.mark.parametrize(
    "query, titles",
    [
        ("care_unit=Ward%203", ["Idle", "Ward morning"]),
        ("q=round", ["ICU night round"]),
        ("q=ROUND", ["ICU night round"]),
        ("run_state=pending", ["ICU night round"]),
        ("run_state=completed", ["Ward morning"]),
        ("run_state=none", ["Idle"]),
        ("care_unit=Ward%203&run_state=completed", ["Ward morning"]),
    ],
)
def test_the_list_filters_by_unit_title_and_latest_run(api, three_sessions, query, titles):
    body = api.get(f"/api/v1/sessions/?{query}").json()

    assert [row["title"] for row in body["results"]] == titles


def test_the_latest_run_decides_the_run_state_filter(api, three_sessions):
    icu = three_sessions[0]
    open_run(api, icu["id"])  # supersedes the first run: the latest is pending, the first aborted

    assert [r["title"] for r in api.get("/api/v1/sessions/?run_state=aborted").json()["results"]] == []


def test_the_list_filters_by_creation_time(api, three_sessions):
    icu = three_sessions[0]
    Session.objects.filter(pk=icu["id"]).update(created_at=timezone.now() - datetime.timedelta(days=3))
    cut = (timezone.now() - datetime.timedelta(days=1)).isoformat()

    before = api.get("/api/v1/sessions/", {"created_before": cut}).json()["results"]
    after = api.get("/api/v1/sessions/", {"created_after": cut}).json()["results"]

    assert [row["title"] for row in before] == ["ICU night round"]
    assert [row["title"] for row in after] == ["Idle", "Ward morning"]


@pytest.mark.parametrize("limit", ["abc", "0", "-3", "%C2%B2", "9" * 40])
def test_a_bad_page_size_is_400_on_sessions_and_messages(api, limit):
    # Not DRF's silent default page: the client asked for something it will not get.
    session = api.post("/api/v1/sessions/", {}, format="json").json()
    for path in ("/api/v1/sessions/", f"/api/v1/sessions/{session['id']}/messages/"):
        response = api.get(f"{path}?limit={limit}")
        assert (response.status_code, response.json()["error"]) == (400, "invalid_payload"), path


def test_a_page_size_over_the_maximum_gives_the_maximum(api):
    for _ in range(3):
        api.post("/api/v1/sessions/", {}, format="json")
    assert len(api.get("/api/v1/sessions/?limit=100000").json()["results"]) == 3


@pytest.mark.parametrize("query", ["run_state=parked", "created_after=yesterday", "created_before=2026-13-01"])
def test_a_bad_list_filter_is_400(api, query):
    response = api.get(f"/api/v1/sessions/?{query}")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
