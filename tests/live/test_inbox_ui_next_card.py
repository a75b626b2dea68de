"""Decisions at the pace of a shift, in real Chromium (server played by tests/live/inbox_harness.py): after a
decision the next card has the focus, also when it is the first card of the next run, so a / r act on it at
once without pressing j first.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser

RUN_A = "0a0a0a0a-1111-4111-8111-000000000001"
RUN_B = "0b0b0b0b-2222-4222-8222-000000000002"


def two_runs():
    """Run A with two cards for one patient, run B with one for another: A's first, as the queue lists them."""
    a1 = approval_card(tier="low", run_id=RUN_A, patient_ref="MRN-80001", expires_in=100)
    a2 = approval_card(tier="low", run_id=RUN_A, patient_ref="MRN-80001", expires_in=200)
    b1 = approval_card(tier="low", run_id=RUN_B, patient_ref="MRN-80002", expires_in=300)
    return a1, a2, b1


@pytest.mark.parametrize("view", ["queue", "full"])
def test_a_moves_on_through_the_run_and_into_the_next(page, view):
    harness = InboxHarness(page, view=view)
    a1, a2, b1 = two_runs()
    harness.open([a1, a2, b1])
    page.keyboard.press("j")
    expect(harness.card(a1["id"])).to_be_focused()

    page.keyboard.press("a")
    assert harness.wait_for_decisions(1)[-1].approval_id == a1["id"]
    expect(harness.card(a2["id"])).to_be_focused()

    page.keyboard.press("a")  # the last card of run A
    assert harness.wait_for_decisions(2)[-1].approval_id == a2["id"]
    expect(harness.card(b1["id"])).to_be_focused()
    expect(harness.card(b1["id"])).to_be_visible()

    page.keyboard.press("a")  # no j needed: run B's first card is the one a acts on
    assert harness.wait_for_decisions(3)[-1].approval_id == b1["id"]
    assert [d.approval_id for d in harness.decisions] == [a1["id"], a2["id"], b1["id"]]


def test_a_rejection_by_click_moves_on_too(page):
    harness = InboxHarness(page, view="queue")
    a1, a2, b1 = two_runs()
    harness.open([a1, a2, b1])
    page.get_by_test_id("queue-row").nth(1).click()  # a2, the last of run A
    card = harness.card(a2["id"])
    card.get_by_test_id("reject").click()
    card.get_by_test_id("reject-reason").fill("Duplicate order")
    card.get_by_test_id("reject-submit").click()
    harness.wait_for_decisions(1)
    expect(harness.card(b1["id"])).to_be_focused()
    page.keyboard.press("r")
    expect(harness.card(b1["id"]).get_by_test_id("reject-reason")).to_be_focused()


def test_rejecting_and_stopping_the_run_moves_past_its_other_cards(page):
    harness = InboxHarness(page, view="full")
    a1, a2, b1 = two_runs()
    harness.open([a1, a2, b1])
    page.keyboard.press("j")
    page.keyboard.press("r")
    page.keyboard.type("Wrong patient")
    harness.card(a1["id"]).get_by_test_id("reject-stop-submit").click()
    harness.wait_for_decisions(1)
    expect(harness.card(b1["id"])).to_be_focused()


def test_the_focus_stays_where_the_reviewer_took_it(page):
    harness = InboxHarness(page, view="queue")
    a1, a2, b1 = two_runs()
    harness.open([a1, a2, b1])
    search = page.get_by_test_id("queue-search")
    harness.during_next(a1["id"], lambda: search.focus())
    page.keyboard.press("j")
    page.keyboard.press("a")
    harness.wait_for_decisions(1)
    expect(harness.card(a1["id"])).to_have_count(0)
    expect(search).to_be_focused()
