"""The inbox on a 390 px phone, in real Chromium (server played by tests/live/inbox_harness.py): nothing
scrolls sideways (the Settings menu included), the sticky action bar never covers an open panel (the reason
box, the high-risk confirmation), and every touch target is at least 44 px.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live.inbox_demo import demo_cards
from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 700}

# Where the page is wider than the screen, and every element poking out past either edge.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || !el.checkVisibility({ visibilityProperty: true })) continue;
    if (el.closest('.visually-hidden')) continue;
    if (r.left < -0.5 || r.right > width + 0.5) out.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(r.left)}–${Math.round(r.right)}`);
  }
  return { scrollWidth: document.documentElement.scrollWidth, width, out: out.slice(0, 10) };
}"""

# Every control a finger may need, on screen and smaller than 44 × 44 px.
SMALL_TARGETS = """() => {
  const small = [];
  const controls = document.querySelectorAll('#inbox button, #inbox summary, #inbox select, #inbox input, #inbox a, #inbox textarea');
  for (const el of controls) {
    const box = el.matches('input[type=checkbox], input[type=radio]') ? el.closest('label') || el : el;
    const r = box.getBoundingClientRect();
    if (!r.width || !r.height || !el.checkVisibility({ visibilityProperty: true }) || el.closest('.visually-hidden')) continue;
    if (el.matches('.skip-card') && document.activeElement !== el) continue; // off screen until focused
    if (r.height < 44 || r.width < 44) small.push(`${el.tagName.toLowerCase()}[${el.dataset.testid || el.className}] "${(el.textContent || el.value || '').trim().slice(0, 20)}" ${Math.round(r.width)}×${Math.round(r.height)}`);
  }
  return small;
}"""

# The sticky elements on screen whose box overlaps the element's.
COVERING = """el => {
  const r = el.getBoundingClientRect();
  const hits = [];
  for (const other of document.querySelectorAll('body *')) {
    if (other === el || other.contains(el) || el.contains(other)) continue;
    const style = getComputedStyle(other);
    if (style.position !== 'sticky' && style.position !== 'fixed') continue;
    const o = other.getBoundingClientRect();
    if (!o.width || !o.height) continue;
    if (o.left < r.right && r.left < o.right && o.top < r.bottom && r.top < o.bottom) hits.push(`${other.tagName.toLowerCase()}.${other.className}`);
  }
  return hits;
}"""


@pytest.fixture
def phone(page):
    page.set_viewport_size(PHONE)
    return page


def long_card(**kw):
    """A card whose args fill the phone's screen, so its panels reach the sticky bar."""
    args = {f"line_{i}": f"value number {i} of a long order" for i in range(14)}
    return approval_card(args=args, patient_ref="MRN-41001", **kw)


@pytest.mark.parametrize("view", ["queue", "full"])
def test_nothing_scrolls_sideways_with_the_settings_open(phone, view):
    harness = InboxHarness(phone, view=view)
    harness.open(demo_cards() + [clarification_card()])
    if view == "queue":
        phone.get_by_test_id("queue-row").first.click()
    phone.get_by_test_id("inbox-settings").locator("summary").click()
    expect(phone.get_by_test_id("shortcuts-toggle")).to_be_visible()
    found = phone.evaluate(OVERFLOW)
    assert found["scrollWidth"] <= found["width"] and found["out"] == [], found


@pytest.mark.parametrize("view", ["queue", "full"])
def test_every_touch_target_is_at_least_44_px(phone, view):
    harness = InboxHarness(phone, view=view)
    harness.open(demo_cards() + [clarification_card()])
    if view == "queue":
        assert phone.evaluate(SMALL_TARGETS) == [], phone.evaluate(SMALL_TARGETS)  # the queue, its filters and lines
        phone.get_by_test_id("queue-row").first.click()
    phone.get_by_test_id("inbox-settings").locator("summary").click()
    assert phone.evaluate(SMALL_TARGETS) == [], phone.evaluate(
        SMALL_TARGETS
    )  # the open card (Claim, Stop run…, folds) and the settings


def test_the_claim_pill_is_a_44_px_target(phone):
    harness = InboxHarness(phone, view="queue")
    card = long_card()
    harness.open([card])
    phone.get_by_test_id("queue-row").first.click()
    box = harness.card(card["id"]).get_by_test_id("claim-toggle").bounding_box()
    assert box["height"] >= 44 and box["width"] >= 44, box


def test_the_sticky_bar_never_covers_the_reason_box(phone):
    harness = InboxHarness(phone, view="queue")
    card = long_card()
    harness.open([card])
    phone.get_by_test_id("queue-row").first.click()
    phone.keyboard.press("r")
    el = harness.card(card["id"])
    reason = el.get_by_test_id("reject-reason")
    expect(reason).to_be_focused()
    phone.keyboard.type("Not on this ward")
    for part in (reason, el.get_by_test_id("reject-submit"), el.get_by_test_id("reject-stop-warning")):
        part.scroll_into_view_if_needed()
        assert part.evaluate(COVERING) == [], part
    # Scrolled so the box sits at the bottom of the screen, where a sticky bar would be.
    reason.evaluate("el => el.scrollIntoView({block: 'end'})")
    assert reason.evaluate(COVERING) == []


def test_the_sticky_bar_never_covers_the_confirmation_summary(phone):
    harness = InboxHarness(phone, view="queue")
    card = long_card(tier="high")
    harness.open([card])
    phone.get_by_test_id("queue-row").first.click()
    phone.keyboard.press("a")
    el = harness.card(card["id"])
    expect(el.get_by_test_id("confirm-panel")).to_be_visible()
    for testid in ("confirm-text", "confirm-patient", "confirm-args", "confirm-approve"):
        part = el.get_by_test_id(testid)
        part.evaluate("el => el.scrollIntoView({block: 'end'})")
        assert part.evaluate(COVERING) == [], testid


def test_the_bulk_selection_fits_the_phone_with_44_px_targets(phone):
    harness = InboxHarness(phone, view="queue", quick_reasons=("Duplicate of an existing order",))
    harness.open([approval_card(tier="low", patient_ref=f"MRN-4200{i}") for i in range(3)])
    for box in phone.get_by_test_id("bulk-select").all()[:2]:
        box.check()
    phone.get_by_test_id("bulk-reject").click()
    expect(phone.get_by_test_id("bulk-panel")).to_be_visible()
    assert phone.evaluate(SMALL_TARGETS) == [], phone.evaluate(SMALL_TARGETS)
    found = phone.evaluate(OVERFLOW)
    assert found["scrollWidth"] <= found["width"] and found["out"] == [], found
