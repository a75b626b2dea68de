"""The inbox with 500 pending cards sent in pages of 100 (issue 11, issue 14), in real
Chromium with the server played by the harness as inbox/pages.py pages:
the queue says how many of the total are loaded, loads more on "Load more" (by
keyboard), on scrolling to the end and on j past the last line (one page for each,
never two), has its search and filters answered by the server over every pending card,
builds a card's full DOM only when it is opened, and keeps the total right through pushes.

Run: .venv/bin/pytest tests/live/test_inbox_ui_paging.py -q
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card, queue_key
from tests.live.test_inbox_ui_queue import hospital, row, rows

pytestmark = pytest.mark.browser


@pytest.fixture
def paged(page):
    harness = InboxHarness(page, view="queue")
    yield harness
    assert harness.page_errors == [], f"JavaScript errors on the page: {harness.page_errors}"
    assert harness.server_errors == [], f"harness errors: {harness.server_errors}"


def loaded(paged):
    return paged.page.get_by_test_id("queue-loaded")


def more(paged):
    return paged.page.get_by_test_id("queue-more")


def why(paged):
    """What the page says by "Load more" while it cannot load more."""
    return paged.page.get_by_test_id("queue-more-why")


def built_cards(paged) -> int:
    return paged.cards().count()


def test_the_queue_shows_the_first_page_and_the_total(paged):
    cards = hospital(500)
    paged.open(cards)
    expect(loaded(paged)).to_have_text("100 of 500 shown")
    expect(paged.page.get_by_test_id("pending-count")).to_have_text("500")
    expect(rows(paged)).to_have_count(50)  # the queue's own pages of 50 lines
    expect(more(paged)).to_have_text("Load 100 more")
    shown = set(
        paged.page.eval_on_selector_all('[data-testid="queue-row"]', "els => els.map(e => e.dataset.approvalId)")
    )
    first_page = {card["id"] for card in sorted(cards, key=queue_key)[:100]}
    assert shown <= first_page
    assert paged.page_requests == []


def test_load_more_by_keyboard_brings_the_next_page(paged):
    paged.open(hospital(500))
    more(paged).focus()
    paged.page.keyboard.press("Enter")
    expect(loaded(paged)).to_have_text("200 of 500 shown")
    for shown in (300, 400):
        more(paged).focus()
        paged.page.keyboard.press("Space")
        expect(loaded(paged)).to_have_text(f"{shown} of 500 shown")
    more(paged).focus()
    paged.page.keyboard.press("Enter")
    expect(more(paged)).to_be_hidden()  # all 500 are here: nothing more to load
    expect(loaded(paged)).to_be_hidden()
    assert len(paged.page_requests) == 4
    expect(paged.page.get_by_test_id("queue-range")).to_have_text("1–50 of 500")


def test_scrolling_to_the_end_of_what_is_loaded_loads_the_next_page(paged):
    paged.open(hospital(500))
    more(paged).scroll_into_view_if_needed()
    paged.seen_in_view(more(paged))
    paged.socket_round_trip()
    assert paged.page_requests == []  # the reviewer is on the first 50 lines of 100: not the end yet
    paged.page.get_by_test_id("queue-next").click()
    more(paged).scroll_into_view_if_needed()
    expect(loaded(paged)).to_have_text("200 of 500 shown")
    assert len(paged.page_requests) == 1


def test_a_press_while_the_page_asked_for_is_on_its_way_asks_for_nothing_more(paged):
    paged.open(hospital(300))
    more(paged).scroll_into_view_if_needed()
    paged.seen_in_view(more(paged))
    paged.answer_pages = False  # the server is slow to answer
    paged.page.get_by_test_id("queue-next").click()  # to the last lines loaded, the button on screen: it asks
    expect(more(paged)).to_have_text("Loading…")
    more(paged).click(timeout=5000)  # and the reviewer presses it meanwhile
    paged.socket_round_trip()
    assert len(paged.page_requests) == 1
    paged.send(paged.page_frame(paged.page_requests[0]))
    expect(loaded(paged)).to_have_text("200 of 300 shown")
    paged.socket_round_trip()
    assert len(paged.page_requests) == 1


def scroll_to_more_until(paged, text: str, tries: int = 4) -> None:
    """Scroll "Load more" into view until the queue says `text`.

    One scroll is what a reviewer does, but on a loaded machine the 100 full cards above the
    button may still be settling (fonts, the first tick's countdowns) when Playwright scrolls,
    and the button slides off screen before the observer looks. Scrolling again is what the
    reviewer would do; how many pages that asks for is the test's check, not how many scrolls.
    """
    for _ in range(tries - 1):
        more(paged).scroll_into_view_if_needed()
        try:
            expect(loaded(paged)).to_have_text(text, timeout=5000)
            return
        except AssertionError:
            continue
    more(paged).scroll_into_view_if_needed()
    expect(loaded(paged)).to_have_text(text)


def test_in_the_full_layout_one_scroll_to_the_end_loads_one_page(page):
    paged = InboxHarness(page, view="full")
    paged.open(hospital(400))
    scroll_to_more_until(paged, "200 of 400 shown")
    expect(paged.cards()).to_have_count(200)
    # Drawn, and the observers told where the button went, before the check that nothing more was asked.
    paged.page.evaluate(
        "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 100))))"
    )
    paged.socket_round_trip()
    assert len(paged.page_requests) == 1
    expect(loaded(paged)).to_have_text("200 of 400 shown")
    assert paged.page_errors == []


def test_j_past_the_last_loaded_line_loads_more(paged):
    cards = hospital(150)
    paged.open(cards)
    row(paged, sorted(cards, key=queue_key)[0]).click()
    for _ in range(100):
        paged.page.keyboard.press("j")
    expect(loaded(paged)).to_be_hidden()  # all 150 loaded
    assert len(paged.page_requests) == 1


def range_text(paged):
    return paged.page.get_by_test_id("queue-range")


def search(paged, text: str) -> None:
    paged.page.get_by_test_id("queue-search").fill(text)


def test_a_patient_search_counts_every_pending_card_of_theirs_before_any_scrolling(paged):
    cards = hospital(276)
    # 54 cards of one patient, spread through the server's order: most are past the first page.
    theirs = [
        approval_card(
            tier=("high", "low", None)[i % 3], expires_in=200 + i * 60, patient_ref="MRN-20417", care_unit="Ward 4"
        )
        for i in range(54)
    ]
    paged.open(cards + theirs)
    expect(loaded(paged)).to_have_text("100 of 330 shown")
    first_page = {card["id"] for card in sorted(cards + theirs, key=queue_key)[:100]}
    assert len(first_page & {card["id"] for card in theirs}) < 54

    search(paged, "MRN-20417")

    group = paged.page.get_by_test_id("queue-group")
    expect(group).to_have_count(1)
    expect(group).to_contain_text("54 requests")
    expect(range_text(paged)).to_have_text("1–50 of 54 (filtered from 330)")
    expect(rows(paged)).to_have_count(50)
    assert paged.page_requests == []  # not a page of the socket's: the search's own, from the server
    paged.page.get_by_test_id("queue-next").click()
    expect(range_text(paged)).to_have_text("51–54 of 54 (filtered from 330)")
    expect(group).to_contain_text("54 requests")


def test_a_search_follows_the_cards_that_arrive_and_leave(paged):
    theirs = [approval_card(tier="low", expires_in=600 + i, patient_ref="MRN-5") for i in range(3)]
    paged.open(hospital(200) + theirs)
    search(paged, "MRN-5")
    group = paged.page.get_by_test_id("queue-group")
    expect(group).to_have_count(1)
    expect(group).to_contain_text("3 requests")

    late = approval_card(tier=None, expires_in=3500, patient_ref="MRN-5")  # far past the loaded page
    paged.add(late)
    expect(group).to_contain_text("4 requests")
    expect(row(paged, late)).to_be_visible()
    expect(range_text(paged)).to_have_text("1–4 of 4 (filtered from 204)")

    paged.remove(theirs[0]["id"])
    expect(group).to_contain_text("3 requests")
    expect(range_text(paged)).to_have_text("1–3 of 3 (filtered from 203)")


def test_the_exact_patient_comes_first_then_prefix_matches_never_a_substring(paged):
    longer = [approval_card(tier="high", expires_in=100 + i, patient_ref="MRN-70345") for i in range(3)]
    exact = [approval_card(tier=None, expires_in=2000 + i, patient_ref="MRN-7") for i in range(2)]
    substring = approval_card(tier="high", expires_in=50, patient_ref="MRN-17")
    paged.open(longer + exact + [substring])

    search(paged, "MRN-7")

    expect(rows(paged)).to_have_count(5)
    patients = paged.page.eval_on_selector_all('[data-testid="queue-patient"]', "els => els.map(e => e.textContent)")
    assert patients == ["MRN-7"] * 2 + ["MRN-70345"] * 3
    paged.page.get_by_test_id("queue-search").blur()
    paged.page.keyboard.press("j")
    expect(paged.card(sorted(exact, key=queue_key)[0]["id"])).to_be_visible()
    search(paged, "RN-7")  # a substring of every ref: no match
    expect(range_text(paged)).to_have_text("No request matches (6 waiting)")


def test_filters_are_answered_over_every_pending_card_and_load_more_of_the_matches(paged):
    cards = hospital(500)
    # A ward none of the first page's cards is in: its option comes from the server.
    late = [approval_card(tier="low", expires_in=3600 + i, care_unit="Maternity") for i in range(3)]
    paged.open(cards + late)
    loaded_wards = {c["session"]["care_unit"] for c in sorted(cards + late, key=queue_key)[:100]}
    assert "Maternity" not in loaded_wards

    paged.page.get_by_test_id("filter-ward").select_option("Maternity")
    expect(range_text(paged)).to_have_text("1–3 of 3 (filtered from 503)")

    paged.page.get_by_test_id("filter-ward").select_option("ICU")
    icu = [c for c in sorted(cards, key=queue_key) if c["session"]["care_unit"] == "ICU"]
    expect(range_text(paged)).to_have_text(f"1–50 of {len(icu)} (filtered from 503)")
    expect(loaded(paged)).to_have_text(f"100 of {len(icu)} matching shown")
    expect(rows(paged).first).to_have_attribute("data-approval-id", icu[0]["id"])
    assert 100 < len(icu) < 200
    more(paged).click()
    expect(loaded(paged)).to_be_hidden()  # every match loaded
    expect(more(paged)).to_be_hidden()
    assert paged.page_requests == []
    assert [s.get("cursor") is not None for s in paged.searches if s.get("ward") == "ICU"] == [False, True]

    paged.page.get_by_test_id("filter-ward").select_option("")
    expect(loaded(paged)).to_have_text("100 of 503 shown")  # the matches past the loaded pages are let go


def test_a_cards_full_dom_is_built_only_when_it_is_opened(paged):
    cards = hospital(500)
    paged.open(cards)
    expect(rows(paged)).to_have_count(50)
    assert built_cards(paged) == 0
    first = sorted(cards, key=queue_key)[0]
    row(paged, first).click()
    expect(paged.card(first["id"])).to_be_visible()
    assert built_cards(paged) == 1
    more(paged).click()
    expect(loaded(paged)).to_have_text("200 of 500 shown")
    assert built_cards(paged) == 1
    paged.page.get_by_test_id("inbox-settings").locator("summary").click()
    paged.page.get_by_test_id("view-full").check()
    expect(paged.cards()).to_have_count(200)  # that layout shows every loaded card in full


def test_pushes_while_paging_keep_the_total(paged):
    cards = hospital(150)
    paged.open(cards)
    expect(loaded(paged)).to_have_text("100 of 150 shown")
    late = approval_card(tier=None, patient_ref="MRN-NEW")  # no tier: last in the server's order
    paged.add(late)
    expect(loaded(paged)).to_have_text("101 of 151 shown")
    expect(paged.page.get_by_test_id("pending-count")).to_have_text("151")
    unloaded = sorted(cards, key=queue_key)[-1]
    paged.remove(unloaded["id"])
    expect(loaded(paged)).to_have_text("101 of 150 shown")
    more(paged).click()
    # The next page brings the pushed card again: it is counted once.
    expect(loaded(paged)).to_be_hidden()
    expect(paged.page.get_by_test_id("queue-range")).to_have_text("1–50 of 150")
    expect(paged.page.get_by_test_id("pending-count")).to_have_text("150")


def test_a_card_gone_without_a_notice_leaves_when_the_page_covering_it_comes(paged):
    cards = hospital(200)
    paged.open(cards)
    ordered = sorted(cards, key=queue_key)
    # Loaded by a push ahead of its page, then decided while this page was not told.
    paged.update(ordered[150]["id"])
    expect(loaded(paged)).to_have_text("101 of 200 shown")
    paged.rows.by_id.pop(ordered[150]["id"])
    more(paged).click()
    expect(loaded(paged)).to_be_hidden()
    expect(paged.page.get_by_test_id("pending-count")).to_have_text("199")
    assert paged.page.evaluate("document.title").startswith("(199)")


def test_a_refused_page_request_is_announced_and_can_be_tried_again(paged):
    paged.open(hospital(200))
    paged.answer_pages = False
    more(paged).click()
    expect(more(paged)).to_have_text("Loading…")
    paged.send(paged.page_frame("forged"))  # the consumer's answer to a cursor it did not sign
    expect(paged.feedback).to_contain_text("Could not load more requests: This page cursor is not one the inbox sent")
    paged.answer_pages = True
    expect(more(paged)).to_be_enabled()
    more(paged).click()
    expect(loaded(paged)).to_be_hidden()


def test_a_reconnect_starts_again_from_the_first_page_but_keeps_the_open_card(paged):
    cards = hospital(300)
    paged.open(cards)
    more(paged).click()
    expect(loaded(paged)).to_have_text("200 of 300 shown")
    first_page = {card["id"] for card in sorted(cards, key=queue_key)[:100]}
    for _ in range(3):
        paged.page.get_by_test_id("queue-next").click()
    ids = paged.page.eval_on_selector_all('[data-testid="queue-row"]', "els => els.map(e => e.dataset.approvalId)")
    opened = next(i for i in ids if i not in first_page)
    paged.page.locator(f'[data-testid="queue-row"][data-approval-id="{opened}"] button').click()
    expect(paged.card(opened)).to_be_visible()

    paged.answer_pages = False  # what the reconnect itself brings, without the pages the queue may ask for next
    paged.drop_connection()
    paged.wait_for_connections(2)
    expect(paged.connection).to_have_text("Live")
    expect(loaded(paged)).to_have_text("101 of 300 shown")  # the first page, and the card being read
    expect(paged.card(opened)).to_be_visible()


def test_a_page_asked_on_a_socket_that_drops_is_announced_and_loads_whole_after_the_reconnect(paged):
    cards = hospital(150)
    paged.open(cards)
    paged.answer_pages = False  # the socket drops before the server answers
    more(paged).click()
    expect(more(paged)).to_have_text("Loading…")
    paged.socket_down = True  # and stays down for now (no poll either: the card list is not served)

    paged.drop_connection()

    told = paged.page.get_by_role("status").get_by_test_id("feedback-message")
    expect(told).to_contain_text("Could not load more requests: The connection dropped before they came.")
    expect(more(paged)).to_have_text("Load 50 more")  # not "Loading…" for a page that can no longer come
    expect(more(paged)).to_be_disabled()
    expect(why(paged)).to_contain_text("Reconnecting")

    paged.socket_down, paged.answer_pages = False, True
    paged.page.evaluate("window.dispatchEvent(new Event('online'))")  # the network is back: no backoff to wait out
    expect(paged.connection).to_have_text("Live")
    expect(why(paged)).to_be_hidden()
    more(paged).click()
    expect(loaded(paged)).to_be_hidden()
    paged.page.get_by_test_id("inbox-settings").locator("summary").click()
    paged.page.get_by_test_id("view-full").check()
    expect(paged.cards()).to_have_count(150)
    assert sorted(paged.displayed_ids()) == sorted(card["id"] for card in cards)  # none lost, none twice
