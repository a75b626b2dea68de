"""The inbox snapshot in pages (issue 11): the queue's order, a keyset cursor, a total,
no frame over 256 KB, and the same few queries however many cards wait.

Over the real websocket consumer: tests/live/test_inbox_socket_pages.py.
"""

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import signing
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals import cards
from approvals.models import Approval, ApprovalStatus, ReviewTeam
from approvals.visibility import reviewer_scope
from core.errors import InvalidCursor
from inbox import pages as inbox_pages
from tests.helpers.bulk import pending_cards_in_bulk

pytestmark = pytest.mark.django_db


def scope(user):
    return reviewer_scope(User.objects.get(pk=user.pk))


def every_page(user, **kwargs) -> list[dict]:
    pages = [inbox_pages.page(scope(user), **kwargs)]
    while pages[-1]["cursor"] is not None:
        pages.append(inbox_pages.page(scope(user), pages[-1]["cursor"], **kwargs))
    return pages


def queue_key(card: dict) -> tuple:
    """The inbox queue's default order (inbox/static/inbox/list.js compareEntries)."""
    risk = {"high": 0, "low": 1}.get(card["hitl_tier"], 2)
    return (card["escalated_at"] is None, risk, card["expires_at"], card["id"])


def test_pages_of_a_hundred_go_through_every_card_once_in_queue_order(ward_agent, rita):
    made = pending_cards_in_bulk(ward_agent, 250, escalate_every=9)
    pages = every_page(rita)
    assert [len(page["cards"]) for page in pages] == [100, 100, 50]
    assert {page["total"] for page in pages} == {250}
    sent = [card for page in pages for card in page["cards"]]
    assert [card["id"] for card in sent] == [
        str(a.pk)
        for a in sorted(
            made,
            key=lambda a: (a.escalated_at is None, {"high": 0, "low": 1}.get(a.hitl_tier, 2), a.expires_at, str(a.pk)),
        )
    ]
    assert sent == sorted(sent, key=queue_key)
    assert sent[0]["escalated_at"] is not None and sent[0]["hitl_tier"] == "high"


def test_each_card_of_a_page_is_the_card_built_for_that_approval_alone(ward_agent, rita, rob):
    # The page reads only the columns a card shows (cards.CARD_ROW): what it sends must be byte for byte
    # what a push of that approval sends, with claims, four eyes, edits, grants, escalation and taint in play.
    made = pending_cards_in_bulk(ward_agent, 12, escalate_every=4)
    now = timezone.now()
    Approval.objects.filter(pk=made[0].pk).update(claimed_by=rob, claim_expires_at=now + timedelta(minutes=5))
    Approval.objects.filter(pk=made[1].pk).update(claimed_by=rob, claim_expires_at=now - timedelta(minutes=5))
    Approval.objects.filter(pk=made[2].pk).update(
        approvals_required=2,
        approved_args={"dose_mg": 1},
        payload_hash="1" * 64,
        message="Which ward?",
        approvals=[{"reviewer": "rob", "at": now.isoformat(), "reason": "ok", "payload_hash": "1" * 64}],
    )
    Approval.objects.filter(pk=made[3].pk).update(status=ApprovalStatus.APPROVED, decided_by=rob, decided_at=now)
    made[4].session.__class__.objects.filter(pk=made[4].session_id).update(tainted=True)

    (page,) = every_page(rita)

    assert len(page["cards"]) == 11
    assert any(card["run_granted"] for card in page["cards"]) and any(card["claimed_by"] for card in page["cards"])
    for card in page["cards"]:
        assert json.dumps(card) == json.dumps(cards.card(Approval.objects.get(pk=card["id"])))


def test_the_sockets_message_is_the_page_encoded_once(ward_agent, rita, monkeypatch):
    # The consumer sends inbox_pages.frame as it is: each card's text was written once, to size the page.
    # The cursor is signed with the second it was made: one clock second for every build here,
    # or a build that crosses a second's boundary (a loaded machine) differs in its cursor alone.
    monkeypatch.setattr(signing.TimestampSigner, "timestamp", lambda signer: signing.b62_encode(1_800_000_000))
    pending_cards_in_bulk(ward_agent, 130, escalate_every=7, args={"dose": 2.5, "note": "é ✓ \U0001f600"})
    first = inbox_pages.page(scope(rita))
    assert inbox_pages.frame(scope(rita)) == json.dumps({"type": "snapshot", **first})
    second = inbox_pages.frame(scope(rita), first["cursor"])
    assert second == json.dumps(
        {"type": "page", "after": first["cursor"], **inbox_pages.page(scope(rita), first["cursor"])}
    )
    assert len(json.loads(second)["cards"]) == 30 and len(second.encode()) <= inbox_pages.PAGE_MAX_BYTES
    assert inbox_pages.build(scope(rita)).message() == json.dumps(first)  # the polling endpoint's body


def test_a_card_decided_between_pages_shifts_nothing(ward_agent, rita):
    pending_cards_in_bulk(ward_agent, 150)
    first = inbox_pages.page(scope(rita))
    # The first page's own cards are decided: an offset would now skip 20 cards of the next page.
    decided = [card["id"] for card in first["cards"][:20]]
    Approval.objects.filter(pk__in=decided).update(status=ApprovalStatus.REJECTED)
    second = inbox_pages.page(scope(rita), first["cursor"])
    assert second["total"] == 130
    assert len(second["cards"]) == 50 and second["cursor"] is None
    assert not {card["id"] for card in first["cards"]} & {card["id"] for card in second["cards"]}


def test_a_page_with_10_pending_and_with_300_pending_costs_the_same_queries(ward_agent, rita):
    def queries(count: int) -> int:
        Approval.objects.all().delete()
        pending_cards_in_bulk(ward_agent, count, escalate_every=5)
        first = inbox_pages.page(scope(rita))
        reviewer = scope(rita)
        with CaptureQueriesContext(connection) as captured:
            inbox_pages.page(reviewer, first["cursor"] if count > 100 else None)
        return len(captured)

    assert queries(10) == queries(300) == 4  # the page, its total, the runs' grants, the calls' context


def test_no_frame_passes_256_kb_and_a_cut_page_continues_where_it_stopped(ward_agent, rita, settings):
    settings.CONDOR_CARD_ARGS_MAX_BYTES = 64 * 1024
    made = pending_cards_in_bulk(ward_agent, 30, args={"note": "x" * 40_000})
    pages = every_page(rita)
    assert len(pages) > 1
    for page in pages:
        frame = {"type": "page", "after": "c" * 200, **page}
        assert len(json.dumps(frame).encode()) <= inbox_pages.PAGE_MAX_BYTES
    assert sorted(card["id"] for page in pages for card in page["cards"]) == sorted(str(a.pk) for a in made)
    assert all(card["args"] == {"note": "x" * 40_000} for page in pages for card in page["cards"])


def test_a_card_too_big_for_a_frame_alone_goes_with_its_args_cut(ward_agent, rita, settings):
    settings.CONDOR_CARD_ARGS_MAX_BYTES = 64 * 1024
    (made,) = pending_cards_in_bulk(ward_agent, 1, args={"note": "x" * 40_000})
    (page,) = every_page(rita, max_bytes=20_000)
    (card,) = page["cards"]
    assert (card["id"], card["args"], card["args_truncated"]) == (str(made.pk), None, True)
    assert len(json.dumps(page).encode()) <= 20_000


@pytest.mark.parametrize("cursor", ["", "not-a-cursor", "W10:1tamper:sig", 42])
def test_a_cursor_this_server_did_not_sign_is_refused(ward_agent, rita, cursor):
    pending_cards_in_bulk(ward_agent, 120)
    with pytest.raises(InvalidCursor):
        inbox_pages.page(scope(rita), cursor)


def test_each_page_follows_the_reviewers_wards_as_they_are_now(ward_agent, rita):
    icu = ReviewTeam.objects.create(name="ICU", care_units=["ICU"])
    icu.members.set([rita])
    ReviewTeam.objects.create(name="Cardiology", care_units=["CARDIO"]).members.set([rita])
    pending_cards_in_bulk(ward_agent, 150, care_unit="ICU")
    pending_cards_in_bulk(ward_agent, 150, care_unit="CARDIO")
    first = inbox_pages.page(scope(rita))
    assert first["total"] == 300
    icu.members.remove(rita)
    rest = [inbox_pages.page(scope(rita), first["cursor"])]
    while rest[-1]["cursor"]:
        rest.append(inbox_pages.page(scope(rita), rest[-1]["cursor"]))
    assert {page["total"] for page in rest} == {150}
    assert {card["session"]["care_unit"] for page in rest for card in page["cards"]} == {"CARDIO"}


def test_nothing_waiting_is_an_empty_last_page(rita):
    assert inbox_pages.page(scope(rita)) == {"cards": [], "total": 0, "cursor": None}
