"""Toasts at the pace of a shift, in real Chromium (server played by tests/live/inbox_harness.py): a success
leaves after about four seconds, no more than three are on screen, and none covers a card's action bar.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser

# Every toast on screen against every action-bar button on screen: the pairs that overlap.
COVERED = """() => {
  const boxes = (sel) => Array.from(document.querySelectorAll(sel)).map((el) => [el, el.getBoundingClientRect()])
    .filter(([el, r]) => r.width && r.height && r.bottom > 0 && r.top < innerHeight);
  const hits = [];
  for (const [toast, t] of boxes('[data-testid="feedback-message"]')) {
    for (const [button, b] of boxes('.card__actions > *')) {
      if (t.left < b.right && b.left < t.right && t.top < b.bottom && b.top < t.bottom) hits.push(button.textContent.trim());
    }
  }
  return hits;
}"""


def test_a_success_leaves_after_about_four_seconds(inbox):
    first, second = approval_card(tier="low", expires_in=7200), approval_card(tier="low", expires_in=7200)
    inbox.open_with_clock_stopped([first, second])
    inbox.card(first["id"]).get_by_test_id("approve").click()
    toast = inbox.page.get_by_test_id("feedback-message")
    expect(toast).to_have_count(1)
    inbox.page.clock.run_for(3000)
    expect(toast).to_have_count(1)
    inbox.page.clock.run_for(2000)
    expect(toast).to_have_count(0)


def test_an_error_stays_until_dismissed(inbox):
    card = approval_card(tier="low", expires_in=7200)
    inbox.fail_network_next(card["id"])
    inbox.open_with_clock_stopped([card])
    inbox.card(card["id"]).get_by_test_id("approve").click()
    toast = inbox.page.get_by_test_id("feedback-message")
    expect(toast).to_have_attribute("data-kind", "error")
    inbox.page.clock.run_for(60_000)
    expect(toast).to_have_count(1)
    toast.get_by_role("button", name="Dismiss message").click()
    expect(toast).to_have_count(0)


def test_no_more_than_three_toasts_are_on_screen(inbox):
    cards = [approval_card(tier="low", patient_ref=f"MRN-7100{i}", expires_in=7200) for i in range(5)]
    inbox.open_with_clock_stopped(cards)  # none leaves on its own meanwhile
    toasts = inbox.page.get_by_test_id("feedback-message")
    for n, card in enumerate(cards, start=1):
        inbox.card(card["id"]).get_by_test_id("claim-toggle").click()
        expect(toasts.last).to_contain_text(card["session"]["patient_ref"])
        expect(toasts).to_have_count(min(n, 3))
    expect(toasts.last).to_contain_text("MRN-71004")  # the newest stay


@pytest.mark.parametrize("width", [390, 1280])
def test_a_toast_never_covers_an_action_bar(page, width):
    page.set_viewport_size({"width": width, "height": 700})
    harness = InboxHarness(page, view="queue")
    run = "3f0c2a55-7d4e-4a51-9d7e-1c2b3a4d5e6f"
    args = {f"line_{i}": f"value {i}" for i in range(8)}
    first, second = (approval_card(tier="low", run_id=run, patient_ref="MRN-72001", args=args) for _ in range(2))
    harness.open([first, second])
    page.get_by_test_id("queue-row").first.click()
    harness.card(first["id"]).get_by_test_id("approve").click()
    harness.wait_for_decisions(1)
    expect(page.get_by_test_id("feedback-message")).to_have_count(1)
    expect(harness.card(second["id"]).get_by_test_id("approve")).to_be_visible()
    harness.card(second["id"]).get_by_test_id("approve").scroll_into_view_if_needed()
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert page.evaluate(COVERED) == []
    # Scrolled so the bar is where the toasts sit by default, bottom right.
    harness.card(second["id"]).get_by_test_id("card-actions").evaluate("el => el.scrollIntoView({block: 'end'})")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert page.evaluate(COVERED) == []
