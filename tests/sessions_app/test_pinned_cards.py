"""Pinned cards: one write path, validated specs, ranks always dense 0..n-1 (SPEC section 7)."""

import pytest
from django.db import connection

from sessions_app import pinned_cards
from sessions_app.models import PinnedCard, ReportedCard, Session
from tests.helpers.approval_loop import CHART_READ, gate, report
from tests.helpers.http import post
from tests.helpers.races import all_at_once
from tests.helpers.runs import make_session, open_executing_run

CARD = {"kind": "lab_result", "title": "Potassium 5.9", "data": {"value": 5.9, "unit": "mmol/L"}}


def base(session_id):
    return f"/api/v1/sessions/{session_id}/pinned-cards/"


def pin(api, session_id, **body):
    return post(api, base(session_id), body)


def ranks(session_id):
    return list(PinnedCard.objects.filter(session_id=session_id).order_by("order").values_list("title", "order"))


@pytest.fixture
def session(api):
    return make_session(api, title="Ward round")


@pytest.fixture
def three(api, session):
    return [pin(api, session["id"], **{**CARD, "title": t}).json() for t in ("a", "b", "c")]


def test_a_pinned_card_reads_as_the_spec_says(api, session):
    response = pin(api, session["id"], **CARD)

    assert response.status_code == 201
    body = response.json()
    assert {k: body[k] for k in ("kind", "title", "data", "order", "source_card")} == {
        **CARD,
        "order": 0,
        "source_card": None,
    }
    assert api.get(base(session["id"])).json() == [body]


def test_pins_append_and_may_be_placed(api, session, three):
    pin(api, session["id"], **{**CARD, "title": "first"}, order=0)

    assert ranks(session["id"]) == [("first", 0), ("a", 1), ("b", 2), ("c", 3)]


def test_unpin_closes_the_gap(api, session, three):
    assert api.delete(f"{base(session['id'])}{three[1]['id']}/").status_code == 204

    assert ranks(session["id"]) == [("a", 0), ("c", 1)]


def test_update_moves_and_edits(api, session, three):
    response = api.patch(f"{base(session['id'])}{three[2]['id']}/", {"title": "C!", "order": 0}, format="json")

    assert response.status_code == 200
    assert response.json()["order"] == 0
    assert ranks(session["id"]) == [("C!", 0), ("a", 1), ("b", 2)]


def test_reorder_takes_every_card_once(api, session, three):
    ids = [three[2]["id"], three[0]["id"], three[1]["id"]]

    response = post(api, f"{base(session['id'])}reorder/", {"ids": ids})

    assert response.status_code == 200
    assert [(c["title"], c["order"]) for c in response.json()] == [("c", 0), ("a", 1), ("b", 2)]


@pytest.mark.parametrize("pick", [lambda ids: ids[:2], lambda ids: ids + ids[:1], lambda ids: ids[:2] + ids[:1]])
def test_a_reorder_that_is_not_a_permutation_is_400_and_changes_nothing(api, session, three, pick):
    response = post(api, f"{base(session['id'])}reorder/", {"ids": pick([c["id"] for c in three])})

    assert response.status_code == 400
    assert ranks(session["id"]) == [("a", 0), ("b", 1), ("c", 2)]


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "Lab Result", "title": "x", "data": {}},
        {"kind": "lab", "title": "", "data": {}},
        {"kind": "lab", "title": "x" * 201, "data": {}},
        {"kind": "lab", "title": "x", "data": []},
        {"kind": "lab", "title": "x", "data": {"blob": "x" * 40000}},
        {"kind": "lab", "title": "x", "data": {}, "source_card": "call-1#0"},
        {"title": "x"},
        {},
    ],
)
def test_a_bad_spec_is_400_and_pins_nothing(api, session, body):
    response = pin(api, session["id"], **body)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_payload"
    assert not PinnedCard.objects.exists()


def test_a_bad_update_changes_nothing(api, session, three):
    response = api.patch(f"{base(session['id'])}{three[0]['id']}/", {"kind": "BAD"}, format="json")

    assert response.status_code == 400
    assert PinnedCard.objects.get(pk=three[0]["id"]).kind == CARD["kind"]


def test_another_client_sees_and_changes_nothing(api, other_api, session, three):
    card = f"{base(session['id'])}{three[0]['id']}/"

    assert other_api.get(base(session["id"])).status_code == 404
    assert pin(other_api, session["id"], **CARD).status_code == 404
    assert other_api.patch(card, {"title": "x"}, format="json").status_code == 404
    assert other_api.delete(card).status_code == 404
    assert post(other_api, f"{base(session['id'])}reorder/", {"ids": [c["id"] for c in three]}).status_code == 404
    assert ranks(session["id"]) == [("a", 0), ("b", 1), ("c", 2)]


def test_a_card_of_another_session_is_404(api, session, three):
    elsewhere = make_session(api)

    assert api.delete(f"{base(elsewhere['id'])}{three[0]['id']}/").status_code == 404


@pytest.fixture
def charted(api, catalog):
    """A run that read the chart (allowed) and reported two cards with the result. Returns (session, run)."""
    run_id = open_executing_run(api, age_band="adult")
    gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="read")
    response = report(
        api,
        run_id,
        "read",
        {"ok": True},
        cards=[CARD, {"id": "k-trend", "kind": "chart", "title": "K+ trend", "data": {"n": 3}}],
    )
    assert response.status_code == 200, response.content
    return str(Session.objects.get(runs__id=run_id).pk), run_id


def test_a_card_reported_with_a_result_can_be_pinned_in_the_same_run(api, charted):
    session_id, _ = charted

    by_index = pin(api, session_id, source_card="read#0")
    by_own_id = pin(api, session_id, source_card="k-trend")

    assert by_index.status_code == by_own_id.status_code == 201
    assert {k: by_index.json()[k] for k in ("kind", "title", "data", "source_card")} == {
        **CARD,
        "source_card": "read#0",
    }
    assert by_own_id.json()["title"] == "K+ trend"


def test_pinning_a_reported_card_twice_keeps_one_pin(api, charted):
    session_id, _ = charted

    first = pin(api, session_id, source_card="read#0").json()
    second = pin(api, session_id, source_card="read#0").json()

    assert first["id"] == second["id"]
    assert PinnedCard.objects.count() == 1


def test_an_unknown_source_card_is_422(api, charted):
    response = pin(api, charted[0], source_card="read#7")

    assert response.status_code == 422
    assert response.json()["error"] == "card_not_reported"


def test_a_bad_card_in_a_result_refuses_the_result(api, catalog):
    run_id = open_executing_run(api, age_band="adult")
    gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="read")

    response = report(api, run_id, "read", {"ok": True}, cards=[{"kind": "x", "title": ""}])

    assert response.status_code == 400
    assert not ReportedCard.objects.exists()
    from approvals.models import ToolCall

    assert ToolCall.objects.get(tool_call_id="read").reported_at is None


def test_the_list_costs_the_same_queries_however_many_pins(api, session, django_assert_max_num_queries):
    stored = Session.objects.get(pk=session["id"])
    for rows in (1, 100):
        PinnedCard.objects.filter(session=stored).delete()
        PinnedCard.objects.bulk_create(PinnedCard(session=stored, order=n, **CARD) for n in range(rows))
        with django_assert_max_num_queries(3):  # key, session, pins
            assert len(api.get(base(session["id"])).json()) == rows


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the flush also empties the groups
def test_two_concurrent_pins_on_postgres_leave_dense_ranks(ward_agent):
    if connection.vendor != "postgresql":
        pytest.skip("the race needs real row locks")
    session = Session.objects.create(client=ward_agent)
    pinned_cards.pin(session.pk, spec={**CARD, "title": "seed"})
    pins = all_at_once(
        [
            lambda: pinned_cards.pin(session.pk, spec={**CARD, "title": "x"}, order=0),
            lambda: pinned_cards.pin(session.pk, spec={**CARD, "title": "y"}, order=None),
        ]
    )

    assert [type(pin) for pin in pins] == [PinnedCard, PinnedCard]
    orders = sorted(PinnedCard.objects.filter(session=session).values_list("order", flat=True))
    assert orders == [0, 1, 2]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the flush also empties the groups
def test_a_concurrent_unpin_and_reorder_leave_dense_ranks(ward_agent):
    if connection.vendor != "postgresql":
        pytest.skip("the race needs real row locks")
    session = Session.objects.create(client=ward_agent)
    cards = [pinned_cards.pin(session.pk, spec={**CARD, "title": t}) for t in "abcd"]
    outcomes = all_at_once(
        [
            lambda: pinned_cards.unpin(session.pk, cards[0].pk),
            lambda: pinned_cards.update(session.pk, cards[3].pk, {"order": 0}),
        ]
    )

    assert not [outcome for outcome in outcomes if isinstance(outcome, Exception)]
    assert sorted(PinnedCard.objects.filter(session=session).values_list("order", flat=True)) == [0, 1, 2]
