"""Taint is monotone: once true, refused back to false by the model, the database and the API."""

import pytest
from django.db import DatabaseError, transaction

from sessions_app.models import Session, TaintCannotBeCleared
from tests.helpers.http import post
from tests.helpers.runs import make_session


@pytest.fixture
def tainted(ward_agent) -> Session:
    session = Session.objects.create(client=ward_agent, title="Referral letter read")
    session.mark_tainted()
    return Session.objects.get(pk=session.pk)


def test_marking_taint_is_idempotent(ward_agent):
    session = Session.objects.create(client=ward_agent)

    assert session.mark_tainted() is True
    assert session.mark_tainted() is False
    assert Session.objects.get(pk=session.pk).tainted is True


def test_the_model_refuses_to_clear_taint(tainted):
    tainted.tainted = False

    with pytest.raises(TaintCannotBeCleared):
        tainted.save()

    assert Session.objects.get(pk=tainted.pk).tainted is True


def test_the_model_refuses_to_clear_taint_through_update_fields(tainted):
    tainted.tainted = False

    with pytest.raises(TaintCannotBeCleared):
        tainted.save(update_fields=["tainted"])


def test_the_database_refuses_a_raw_update_that_clears_taint(tainted):
    with pytest.raises(DatabaseError, match="pgtrigger"), transaction.atomic():
        Session.objects.filter(pk=tainted.pk).update(tainted=False)

    assert Session.objects.get(pk=tainted.pk).tainted is True


def test_the_database_lets_other_fields_of_a_tainted_session_change(tainted):
    Session.objects.filter(pk=tainted.pk).update(title="Renamed")

    assert Session.objects.get(pk=tainted.pk).title == "Renamed"


def test_a_stale_copy_saved_after_tainting_keeps_the_taint(ward_agent):
    stale = Session.objects.create(client=ward_agent, title="Before")
    Session.objects.get(pk=stale.pk).mark_tainted()  # another request taints it meanwhile

    stale.title = "After"
    stale.save()

    stored = Session.objects.get(pk=stale.pk)
    assert (stored.title, stored.tainted) == ("After", True)


def test_a_session_may_become_tainted_through_save(ward_agent):
    session = Session.objects.create(client=ward_agent)

    session.tainted = True
    session.save()

    assert Session.objects.get(pk=session.pk).tainted is True


@pytest.mark.parametrize("value", [True, False])
def test_no_api_field_sets_or_clears_taint(api, value):
    response = post(api, "/api/v1/sessions/", {"title": "x", "tainted": value})

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
    assert "tainted" in response.json()["detail"]
    assert not Session.objects.exists()


def test_an_untrusted_result_taints_the_session_for_good(api):
    session = make_session(api)
    run = post(api, f"/api/v1/sessions/{session['id']}/runs/").json()
    post(api, f"/api/v1/runs/{run['id']}/transition/", {"to": "executing"})
    post(
        api,
        f"/api/v1/runs/{run['id']}/tool-calls/",
        {"tool_call_id": "c1", "step_id": "s1", "tool": "get_patient_summary", "args": {}},
    )

    response = post(api, f"/api/v1/runs/{run['id']}/tool-calls/c1/result/", {"output": "…", "untrusted": True})

    assert response.json()["session_tainted"] is True
    assert api.get(f"/api/v1/sessions/{session['id']}/").json()["tainted"] is True
