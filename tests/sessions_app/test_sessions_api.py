"""Sessions: create, fetch and list, all scoped to the calling client."""

import uuid
from base64 import b64encode

import pytest

from sessions_app.models import Session
from tests.helpers.http import error_of, post
from tests.helpers.runs import make_session


def test_a_new_session_has_fail_closed_defaults(api, ward_agent):
    body = make_session(api)

    assert {key: body[key] for key in ("title", "patient_ref", "autonomy", "consent", "age_band", "tainted")} == {
        "title": "",
        "patient_ref": "",
        "autonomy": "guarded",
        "consent": False,
        "age_band": "unknown",
        "tainted": False,
    }
    assert Session.objects.get(pk=body["id"]).client == ward_agent


def test_a_session_keeps_what_the_client_sent(api):
    body = make_session(
        api, title="Bed 4 — Okafor", patient_ref="MRN-1042", autonomy="autonomous", consent=True, age_band="teen"
    )

    stored = Session.objects.get(pk=body["id"])
    assert (stored.title, stored.patient_ref, stored.autonomy, stored.consent, stored.age_band) == (
        "Bed 4 — Okafor",
        "MRN-1042",
        "autonomous",
        True,
        "teen",
    )


@pytest.mark.parametrize(
    "body",
    [
        {"autonomy": "yolo"},
        {"age_band": "infant"},
        {"consent": "perhaps"},
        {"title": "x" * 201},
        {"client": "someone-else"},
        {"id": str(uuid.uuid4())},
    ],
)
def test_a_bad_session_body_is_400_and_stores_nothing(api, body):
    response = post(api, "/api/v1/sessions/", body)

    assert error_of(response) == (400, "invalid_payload")
    assert not Session.objects.exists()


def test_fetch_answers_the_callers_session(api):
    session = make_session(api, title="Night shift")

    response = api.get(f"/api/v1/sessions/{session['id']}/")

    assert response.status_code == 200
    assert response.json() == {**session, "entities": []}


def test_another_clients_session_is_404(api, other_api):
    session = make_session(api)

    response = other_api.get(f"/api/v1/sessions/{session['id']}/")

    assert error_of(response) == (404, "not_found")


def test_an_unknown_session_is_404(api):
    assert api.get(f"/api/v1/sessions/{uuid.uuid4()}/").status_code == 404


def test_a_session_needs_a_key(db, client):
    assert client.post("/api/v1/sessions/", {}, content_type="application/json").status_code in (401, 403)
    assert not Session.objects.exists()


def test_the_list_holds_only_the_callers_sessions_newest_first(api, other_api):
    mine = [make_session(api, title=f"mine {n}")["id"] for n in range(3)]
    make_session(other_api, title="theirs")

    body = api.get("/api/v1/sessions/").json()

    assert [row["id"] for row in body["results"]] == mine[::-1]


def test_the_list_is_paginated_by_cursor(api):
    ids = [make_session(api, title=f"s{n}")["id"] for n in range(5)][::-1]

    first = api.get("/api/v1/sessions/?limit=2").json()
    second = api.get(first["next"]).json()
    last = api.get(second["next"]).json()

    assert [row["id"] for row in first["results"] + second["results"] + last["results"]] == ids
    assert first["previous"] is None and last["next"] is None
    assert [row["id"] for row in api.get(last["previous"]).json()["results"]] == ids[2:4]


@pytest.mark.parametrize(
    "cursor",
    [
        "%C2%86",  # not ASCII
        "not-base64!",
        b64encode(b"p=not-a-time").decode(),  # decodes, but to a position the ordering cannot hold
        b64encode(b"o=-1").decode(),
    ],
)
@pytest.mark.parametrize("path", ["/api/v1/sessions/", "/api/v1/sessions/{session}/messages/"])
def test_a_cursor_the_server_did_not_send_is_invalid_cursor(api, path, cursor):
    session = make_session(api)["id"]

    response = api.get(f"{path.format(session=session)}?cursor={cursor}")

    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_cursor"


def test_a_page_is_stable_while_new_sessions_arrive(api):
    ids = [make_session(api, title=f"s{n}")["id"] for n in range(4)][::-1]
    first = api.get("/api/v1/sessions/?limit=2").json()

    make_session(api, title="newer")  # would shift an offset page by one

    assert [row["id"] for row in api.get(first["next"]).json()["results"]] == ids[2:]


@pytest.mark.parametrize(
    "query, titles",
    [
        ("patient_ref=MRN-1", ["adult guarded"]),
        ("autonomy=autonomous", ["child autonomous"]),
        ("age_band=child", ["child autonomous"]),
        ("tainted=true", ["tainted"]),
        ("tainted=false", ["child autonomous", "adult guarded"]),
        ("autonomy=guarded&age_band=adult", ["adult guarded"]),
    ],
)
def test_the_list_filters(api, query, titles):
    make_session(api, title="adult guarded", patient_ref="MRN-1", age_band="adult")
    make_session(api, title="child autonomous", patient_ref="MRN-2", autonomy="autonomous", age_band="child")
    Session.objects.get(pk=make_session(api, title="tainted", patient_ref="MRN-3")["id"]).mark_tainted()

    body = api.get(f"/api/v1/sessions/?{query}").json()

    assert [row["title"] for row in body["results"]] == titles


@pytest.mark.parametrize("query", ["autonomy=reckless", "age_band=infant", "tainted=perhaps"])
def test_a_bad_filter_is_400(api, query):
    make_session(api)

    response = api.get(f"/api/v1/sessions/?{query}")

    assert error_of(response) == (400, "invalid_payload")


@pytest.mark.parametrize("sessions", [1, 200])
def test_the_list_costs_the_same_queries_however_long(api, ward_agent, django_assert_num_queries, sessions):
    Session.objects.bulk_create(Session(client=ward_agent, title=f"s{n}") for n in range(sessions))

    # the API key (with its client), the page: no COUNT with a cursor
    with django_assert_num_queries(2):
        assert len(api.get("/api/v1/sessions/?limit=200").json()["results"]) == sessions
