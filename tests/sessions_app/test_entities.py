"""Entity linkage: results report entities; one promote-latest service keeps the current one per kind."""

import pytest

from sessions_app.models import LinkedEntity, Session
from tests.helpers.approval_loop import CHART_READ, gate, report
from tests.helpers.runs import open_executing_run


@pytest.fixture
def run_id(api, catalog):
    run_id = open_executing_run(api, age_band="adult")
    for call in ("c1", "c2"):
        gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id=call, step_id=call)
    return run_id


def linked(api, run_id):
    session_id = Session.objects.get(runs__id=run_id).pk
    return {e["kind"]: e["ref"] for e in api.get(f"/api/v1/sessions/{session_id}/").json()["entities"]}


def test_each_of_the_five_kinds_is_linked(api, run_id):
    entities = [
        {"kind": kind, "id": f"{kind}-1"} for kind in ("patient", "document", "appointment", "encounter", "order")
    ]

    assert report(api, run_id, "c1", {}, entities=entities).status_code == 200

    assert linked(api, run_id) == {e["kind"]: e["id"] for e in entities}


def test_the_latest_result_wins_per_kind_and_other_kinds_stay(api, run_id):
    report(api, run_id, "c1", {}, entities=[{"kind": "patient", "id": "p-1"}, {"kind": "document", "id": "d-1"}])
    report(api, run_id, "c2", {}, entities=[{"kind": "patient", "id": "p-2", "label": "Okafor, Ada"}])

    assert linked(api, run_id) == {"patient": "p-2", "document": "d-1"}
    row = LinkedEntity.objects.get(kind="patient")
    assert (row.label, row.tool_call_id) == ("Okafor, Ada", "c2")


def test_within_one_result_the_last_of_a_kind_wins(api, run_id):
    report(api, run_id, "c1", {}, entities=[{"kind": "order", "id": "o-1"}, {"kind": "order", "id": "o-2"}])

    assert linked(api, run_id) == {"order": "o-2"}


@pytest.mark.parametrize(
    "entity",
    [
        {"kind": "medication", "id": "m-1"},
        {"kind": "patient"},
        {"kind": "patient", "id": ""},
        {"kind": "patient", "id": "p", "extra": 1},
    ],
)
def test_an_unknown_or_malformed_entity_refuses_the_result(api, run_id, entity):
    response = report(api, run_id, "c1", {}, entities=[entity])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
    assert not LinkedEntity.objects.exists()
