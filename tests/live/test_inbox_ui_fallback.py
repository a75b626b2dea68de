"""The inbox in real Chromium when live updates fail: polling while the socket is down (in
the socket's pages), a revoked login, and args too large for the live card. The websocket and the REST
endpoints are played by tests/live/inbox_harness.py.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from rest_framework.exceptions import NotAuthenticated, PermissionDenied

from agents.auth import IsReviewer
from core.errors import DatabaseUnavailable
from tests.live.inbox_rows import approval_card, queue_key
from tests.live.test_inbox_ui_paging import loaded, more, paged, why  # noqa: F401 - a pytest fixture
from tests.live.test_inbox_ui_queue import hospital

pytestmark = pytest.mark.browser

# The page's reconnect backoff tops out at 10 s of its time; the socket is back within that.
RECONNECT_TIMEOUT_MS = 15000


def polling_inbox(inbox, cards, *, poll_seconds: int = 1):
    inbox.socket_down = True
    inbox.cards_served = True
    inbox.poll_seconds = poll_seconds
    inbox.open(cards, wait_live=False)


# --------------------------------------------------------------------------- Redis down


def test_with_the_socket_down_the_inbox_polls_and_says_live_updates_are_paused(inbox):
    first = approval_card()
    polling_inbox(inbox, [first])

    expect(inbox.connection).to_have_attribute("data-state", "polling")
    expect(inbox.page.get_by_test_id("paused-notice")).to_be_visible()
    expect(inbox.page.get_by_test_id("paused-notice")).to_contain_text("Live updates paused — refreshing every 1 s")
    expect(inbox.card(first["id"])).to_be_visible()
    expect(inbox.page.get_by_test_id("stale-notice")).to_be_hidden()

    second = approval_card()
    inbox.add(second)  # no socket: only the next poll can bring it
    expect(inbox.card(second["id"])).to_be_visible()
    inbox.remove(first["id"])
    expect(inbox.card(first["id"])).to_have_count(0)


def test_a_decision_still_works_while_polling(inbox):
    card = approval_card()
    polling_inbox(inbox, [card])

    inbox.card(card["id"]).get_by_test_id("approve").click()

    assert inbox.wait_for_decisions(1)[0].body == {"approved": True, "payload_hash": card["payload_hash"]}
    expect(inbox.card(card["id"])).to_have_count(0)


def test_the_inbox_goes_live_again_when_the_socket_returns_and_stops_polling(inbox):
    inbox.page.clock.install()  # flows like the real one until pass_page_time
    card = approval_card()
    polling_inbox(inbox, [card])
    expect(inbox.connection).to_have_attribute("data-state", "polling")

    inbox.socket_down = False
    inbox.pass_page_time(RECONNECT_TIMEOUT_MS)  # past the longest reconnect backoff
    expect(inbox.connection).to_have_attribute("data-state", "live")
    expect(inbox.page.get_by_test_id("paused-notice")).to_be_hidden()
    polls = inbox.polls
    inbox.pass_page_time(2500)  # two poll intervals
    assert inbox.polls == polls
    expect(inbox.card(card["id"])).to_be_visible()


def test_with_socket_and_snapshot_both_down_the_list_is_marked_stale(inbox):
    inbox.socket_down = True
    inbox.cards_served, inbox.cards_refusal = True, DatabaseUnavailable()
    inbox.poll_seconds = 1
    inbox.open([], wait_live=False)

    expect(inbox.connection).to_have_attribute("data-state", "reconnecting")
    expect(inbox.page.get_by_test_id("stale-notice")).to_be_visible()
    expect(inbox.page.get_by_test_id("paused-notice")).to_be_hidden()


# --------------------------------------------------------------------------- polling in pages


# In the queue layout, where nothing loads more by itself while the reviewer is on the first lines.


def test_polling_reads_the_first_page_not_every_card(paged):
    polling_inbox(paged, hospital(150))

    expect(loaded(paged)).to_have_text("100 of 150 shown")
    paged.wait_for_polls(3)
    assert paged.polled_cursors[:3] == [None, None, None]  # each poll: the one page the reviewer has
    expect(loaded(paged)).to_have_text("100 of 150 shown")


def test_load_more_while_polling_fetches_the_next_page_and_later_polls_refresh_both(paged):
    cards = hospital(150)
    polling_inbox(paged, cards)
    expect(loaded(paged)).to_have_text("100 of 150 shown")

    more(paged).click()

    expect(loaded(paged)).to_be_hidden()  # all 150 loaded
    assert [cursor for cursor in paged.polled_cursors if cursor is not None], "the next page was not asked for"
    gone = sorted(cards, key=queue_key)[120]  # on the second page
    paged.remove(gone["id"])  # decided elsewhere; with no socket only a poll can tell
    expect(paged.page.get_by_test_id("pending-count")).to_have_text("149")
    polls = paged.polls
    paged.wait_for_polls(polls + 4)  # two more polls (each reads both pages)
    # Neither the second page fell away (a poll of the first page only) nor the decided card stayed.
    expect(paged.page.get_by_test_id("queue-range")).to_have_text("1–50 of 149")
    expect(loaded(paged)).to_be_hidden()


def test_a_page_refused_while_polling_is_announced_and_can_be_tried_again(paged):
    polling_inbox(paged, hospital(150), poll_seconds=60)
    expect(loaded(paged)).to_have_text("100 of 150 shown")
    paged.cards_refusal = DatabaseUnavailable()

    more(paged).click()

    expect(paged.feedback).to_contain_text("Could not load more requests: ")
    paged.cards_refusal = None
    expect(more(paged)).to_be_enabled()
    more(paged).click()
    expect(loaded(paged)).to_be_hidden()


def test_load_more_says_why_it_waits_until_the_first_poll_after_a_drop_answers(paged):
    paged.cards_served, paged.poll_seconds = True, 60
    paged.open_with_clock_stopped(hospital(150))
    expect(loaded(paged)).to_have_text("100 of 150 shown")
    paged.socket_down = True  # reconnects are refused: the page falls back to polling

    paged.drop_connection()

    expect(paged.connection).to_have_attribute("data-state", "reconnecting")  # the clock stands: no poll has run
    expect(more(paged)).to_be_disabled()
    expect(why(paged)).to_have_text("Reconnecting — more requests can load once Condor answers again.")
    paged.page.clock.run_for(1_000)  # the first poll
    expect(paged.connection).to_have_attribute("data-state", "polling")
    expect(why(paged)).to_be_hidden()
    paged.page.clock.resume()  # the queue draws on animation frames, which run with the clock
    more(paged).click()
    expect(loaded(paged)).to_be_hidden()


# --------------------------------------------------------------------------- a revoked login


def test_a_socket_closed_for_a_revoked_login_stops_and_says_signed_out(inbox):
    inbox.page.clock.install()
    inbox.cards_served = True
    inbox.poll_seconds = 1
    inbox.open([approval_card()])

    inbox.drop_connection(code=4401, reason="signed out")

    expect(inbox.connection).to_have_attribute("data-state", "signed-out")
    expect(inbox.connection).to_contain_text("Signed out")
    inbox.pass_page_time(RECONNECT_TIMEOUT_MS)  # past the longest reconnect backoff
    assert (len(inbox.sockets), inbox.polls) == (1, 0)  # neither reconnects nor polls


def test_load_more_answered_401_while_polling_signs_out_as_a_refused_poll_does(paged):
    polling_inbox(paged, hospital(150), poll_seconds=60)
    expect(loaded(paged)).to_have_text("100 of 150 shown")
    paged.cards_refusal = NotAuthenticated()  # the session ended: the API answers 401

    more(paged).click()

    expect(paged.connection).to_have_attribute("data-state", "signed-out")
    expect(paged.feedback).to_contain_text("Could not load more requests: You are signed out.")
    expect(more(paged)).to_have_text("Load 50 more")  # not a "Loading…" that never ends
    expect(more(paged)).to_be_disabled()
    expect(why(paged)).to_have_text("Signed out — reload the page to sign in, then load more.")


def test_a_refused_poll_says_signed_out(inbox):
    inbox.socket_down = True
    inbox.cards_served, inbox.cards_refusal = True, PermissionDenied(IsReviewer.message)
    inbox.open([], wait_live=False)

    expect(inbox.connection).to_have_attribute("data-state", "signed-out")


# --------------------------------------------------------------------------- args too large for the card

# Past CONDOR_CARD_ARGS_MAX_BYTES of canonical JSON: the card carries only the start (approvals/cards.py).
FULL_ARGS = {"drug": "gentamicin", "dose_mg": 350, "notes": "x" * 40000, "zz_tail": "visible only in full"}


def cut_card():
    card = approval_card(args=FULL_ARGS)
    assert card["args_truncated"], "the args must be past the card's limit"
    return card


def test_a_cut_card_shows_the_start_marked_and_cannot_be_approved_or_edited(inbox):
    card = cut_card()
    inbox.open([card])
    shown = inbox.card(card["id"])

    expect(shown.get_by_test_id("args-truncated")).to_contain_text("Arguments truncated")
    expect(shown.get_by_test_id("args-preview")).to_contain_text('"drug":"gentamicin"')
    expect(shown.get_by_test_id("approve")).to_be_disabled()
    expect(shown.get_by_test_id("edit")).to_be_disabled()
    shown.click()  # select it, then try the keyboard
    inbox.page.keyboard.press("a")
    inbox.page.keyboard.press("e")
    inbox.round_trip()
    assert inbox.decisions == []
    expect(shown.get_by_test_id("edit-panel")).to_be_hidden()
    expect(shown.get_by_test_id("reject")).to_be_enabled()  # refusing needs no full view


def test_show_all_loads_the_full_args_then_approving_works(inbox):
    card = cut_card()
    inbox.open([card])
    shown = inbox.card(card["id"])

    shown.get_by_test_id("show-all-args").click()

    expect(shown.get_by_test_id("card-args")).to_contain_text("visible only in full")
    expect(shown.get_by_test_id("args-truncated")).to_have_count(0)
    inbox.update(card["id"])  # the same cut card pushed again
    expect(shown.get_by_test_id("card-args")).to_contain_text("visible only in full")
    expect(shown.get_by_test_id("approve")).to_be_enabled()
    shown.get_by_test_id("approve").click()
    assert inbox.wait_for_decisions(1)[0].body == {"approved": True, "payload_hash": card["payload_hash"]}


def test_show_all_refuses_args_of_another_payload(inbox):
    card = approval_card(args=FULL_ARGS, tool="sign_document", op="sign")  # four eyes
    inbox.open([card])
    # A second reviewer's edit puts another payload on the table; its push has not come yet.
    inbox.rows.decide(card["id"], "approved", "bob", edited_args={**FULL_ARGS, "dose_mg": 120})
    shown = inbox.card(card["id"])

    shown.get_by_test_id("show-all-args").click()

    expect(shown.get_by_test_id("card-error")).to_contain_text("changed since the card was sent")
    expect(shown.get_by_test_id("approve")).to_be_disabled()
    expect(shown.get_by_test_id("card-args")).not_to_contain_text("visible only in full")


def test_show_all_of_an_edited_four_eyes_card_shows_the_edit_it_would_approve(inbox):
    card = approval_card(args=FULL_ARGS, tool="sign_document", op="sign")  # four eyes
    inbox.open([card])
    # Bob's edit is the payload on the table now: approving without editing approves it.
    assert not inbox.rows.decide(card["id"], "approved", "bob", edited_args={**FULL_ARGS, "zz_tail": "bob's edit"})
    inbox.update(card["id"])
    shown = inbox.card(card["id"])

    shown.get_by_test_id("show-all-args").click()

    expect(shown.get_by_test_id("card-args")).to_contain_text("bob's edit")
    expect(shown.get_by_test_id("card-args")).not_to_contain_text("visible only in full")
