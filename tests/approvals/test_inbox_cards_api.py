"""GET /api/v1/inbox/cards/: the polling fallback of the inbox when its websocket (Redis) is down.

The same cards as the socket's snapshot, a page at a time, for logged-in
reviewers only, and the reviewer's standing is read again on every call.
"""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import cards
from approvals.models import Approval
from approvals.visibility import ReviewerScope
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.clock import later
from tests.helpers.runs import open_executing_run
from tests.helpers.personas import logged_in

URL = "/api/v1/inbox/cards/"


def park(api, n: int = 1) -> list[str]:
    return [suspend(api, open_executing_run(api))["id"] for _ in range(n)]


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [card["id"] for card in response.json()["results"]]


def test_a_reviewer_reads_the_pending_cards_as_the_socket_sends_them(api, reviewer_http):
    waiting, decided, overdue = park(api, 3)
    approve(reviewer_http, decided)
    Approval.objects.filter(pk=overdue).update(expires_at=later(-1))  # past its deadline, not yet swept

    response = reviewer_http.get(URL)

    assert ids(response) == [waiting]
    assert response.json()["results"] == [cards.card(Approval.objects.get(pk=waiting))]


def test_the_cards_come_a_page_at_a_time_soonest_deadline_first(api, reviewer_http):
    parked = park(api, 3)
    expected = [str(pk) for pk in Approval.objects.filter(pk__in=parked).order_by("expires_at", "pk")
                .values_list("pk", flat=True)]

    first = reviewer_http.get(URL, {"limit": 2})
    second = reviewer_http.get(first.json()["next"])

    assert first.json()["count"] == 3
    assert ids(first) + ids(second) == expected
    assert second.json()["next"] is None


def test_a_page_costs_the_same_queries_for_one_card_or_many(api, reviewer_http):
    def queries_for_a_page(expected_cards: int) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert len(ids(reviewer_http.get(URL))) == expected_cards
        return len(queries)

    park(api)
    one = queries_for_a_page(1)
    park(api, 4)
    # session, user, group (twice), review teams, count, the page with its joins, its runs' grants in one
    # query, and its calls' context (rationale, autonomy, taint source) in one more
    assert queries_for_a_page(5) == one <= 9


@pytest.mark.parametrize(("who", "error"), [
    ("api_key", "permission_denied"), ("compliance", "permission_denied"), ("anonymous", "not_authenticated"),
])
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
