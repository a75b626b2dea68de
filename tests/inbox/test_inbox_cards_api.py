"""GET /api/v1/inbox/cards/: the polling fallback of the inbox when its websocket (Redis) is down.

The same pages as the socket's snapshot (inbox/pages.py): at most a hundred
cards and 256 KB each, in the queue's order, with the total and a signed cursor; for
logged-in reviewers only, and the reviewer's standing is read again on every call.
"""

import json

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import cards
from approvals.models import Approval, ApprovalStatus, ReviewTeam
from approvals.visibility import ReviewerScope, reviewer_scope
from inbox import pages as inbox_pages
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.bulk import pending_cards_in_bulk
from tests.helpers.clock import later
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run

URL = "/api/v1/inbox/cards/"


def park(api, n: int = 1) -> list[str]:
    return [suspend(api, open_executing_run(api))["id"] for _ in range(n)]


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [card["id"] for card in response.json()["cards"]]


def every_page(http) -> list[dict]:
    pages = [http.get(URL).json()]
    while pages[-1]["cursor"] is not None:
        pages.append(http.get(URL, {"cursor": pages[-1]["cursor"]}).json())
    return pages


def test_a_reviewer_reads_the_pending_cards_as_the_socket_sends_them(api, reviewer_http):
    waiting, decided, overdue = park(api, 3)
    approve(reviewer_http, decided)
    Approval.objects.filter(pk=overdue).update(expires_at=later(-1))  # past its deadline, not yet swept

    response = reviewer_http.get(URL)

    assert ids(response) == [waiting]
    assert response.json() == {"cards": [cards.card(Approval.objects.get(pk=waiting))], "total": 1, "cursor": None}


def test_the_cards_come_in_the_sockets_pages_of_a_hundred(ward_agent, rita, reviewer_http):
    pending_cards_in_bulk(ward_agent, 250, escalate_every=9)

    pages = every_page(reviewer_http)

    assert [(len(page["cards"]), page["total"]) for page in pages] == [(100, 250), (100, 250), (50, 250)]
    polled = [card["id"] for page in pages for card in page["cards"]]
    socket = [card["id"] for page in every_socket_page(rita) for card in page["cards"]]
    assert polled == socket and len(set(polled)) == 250


def every_socket_page(user) -> list[dict]:
    """What the inbox websocket sends the same reviewer: its snapshot, then each page asked for."""
    scope = reviewer_scope(user)
    pages = [inbox_pages.page(scope)]
    while pages[-1]["cursor"] is not None:
        pages.append(inbox_pages.page(scope, pages[-1]["cursor"]))
    return pages


def test_no_page_is_over_the_frame_limit(ward_agent, reviewer_http):
    # Forty cards of ~15 KB each (under the card's own cut, so each is whole): 600 KB in all.
    pending_cards_in_bulk(ward_agent, 40, args={"note": "x" * 15000})

    pages = every_page(reviewer_http)

    assert len(pages) > 2
    assert all(len(json.dumps(page).encode()) <= inbox_pages.PAGE_MAX_BYTES for page in pages)
    assert sum(len(page["cards"]) for page in pages) == 40


def test_a_card_decided_between_polled_pages_shifts_nothing(ward_agent, reviewer_http):
    pending_cards_in_bulk(ward_agent, 150)
    first = reviewer_http.get(URL).json()
    Approval.objects.filter(pk__in=[card["id"] for card in first["cards"][:20]]).update(status=ApprovalStatus.REJECTED)

    second = reviewer_http.get(URL, {"cursor": first["cursor"]})

    assert (len(ids(second)), second.json()["total"], second.json()["cursor"]) == (50, 130, None)


@pytest.mark.parametrize("cursor", ["", "not-a-cursor", "WzEsMiwiMjAzMC0wMS0wMVQwMDowMDowMCIsIngiXQ:forged"])
def test_a_cursor_the_inbox_did_not_sign_is_refused(api, reviewer_http, cursor):
    park(api)
    response = reviewer_http.get(URL, {"cursor": cursor})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_cursor")


def test_the_next_page_reads_the_reviewers_wards_again(ward_agent, rita, reviewer_http):
    pending_cards_in_bulk(ward_agent, 150, care_unit="ICU")
    first = reviewer_http.get(URL).json()
    assert first["total"] == 150
    ReviewTeam.objects.create(name="Intensive care", care_units=["ICU"])  # without rita
    ReviewTeam.objects.create(name="Renal", care_units=["renal"]).members.add(rita)

    second = reviewer_http.get(URL, {"cursor": first["cursor"]})

    assert (ids(second), second.json()["total"]) == ([], 0)


def test_a_reviewer_removed_from_the_group_gets_no_next_page(ward_agent, rita, reviewer_http):
    pending_cards_in_bulk(ward_agent, 150)
    first = reviewer_http.get(URL).json()
    rita.groups.remove(Group.objects.get(name="reviewers"))
    assert reviewer_http.get(URL, {"cursor": first["cursor"]}).status_code == 403


def test_a_page_costs_the_same_queries_for_one_card_or_many(api, reviewer_http):
    def queries_for_a_page(expected_cards: int) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert len(ids(reviewer_http.get(URL))) == expected_cards
        return len(queries)

    park(api)
    one = queries_for_a_page(1)
    park(api, 4)
    # session, user, group (twice), review teams, the page with its joins, the count, its runs' grants in
    # one query, and its calls' context (rationale, autonomy, taint source) in one more
    assert queries_for_a_page(5) == one <= 9


@pytest.mark.parametrize(
    ("who", "error"),
    [
        ("api_key", "permission_denied"),
        ("compliance", "permission_denied"),
        ("anonymous", "not_authenticated"),
    ],
)
def test_only_a_logged_in_reviewer_may_poll(api, carl, client, who, error):
    park(api)
    caller = {"api_key": api, "compliance": logged_in(carl), "anonymous": client}[who]
    response = caller.get(URL)
    assert (response.status_code, response.json()["error"]) == (403, error)


def test_leaving_the_reviewers_group_refuses_the_next_poll(api, rita, reviewer_http):
    park(api)
    assert reviewer_http.get(URL).status_code == 200
    rita.groups.remove(Group.objects.get(name="reviewers"))
    assert reviewer_http.get(URL).status_code == 403


def test_a_deactivated_reviewer_is_refused_on_the_next_poll(api, rita, reviewer_http):
    park(api)
    assert reviewer_http.get(URL).status_code == 200
    rita.is_active = False
    rita.save()
    assert reviewer_http.get(URL).status_code == 403


def test_the_snapshot_and_the_approval_fetch_follow_the_reviewers_scope(api, reviewer_http, monkeypatch):
    # The hook review teams narrow (approvals/visibility.py): every reviewer read goes through it.
    (approval_id,) = park(api)
    monkeypatch.setattr(ReviewerScope, "visible", lambda self, approvals: approvals.none())

    assert ids(reviewer_http.get(URL)) == []
    assert reviewer_http.get(f"/api/v1/approvals/{approval_id}/").status_code == 404
