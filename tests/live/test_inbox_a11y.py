"""axe-core on the inbox (issue 14): no serious or critical violations, desktop and phone,
in the queue with a card open and with every card in full.

axe-core (tests/live/axe_scan.py) runs in the page; the server is mocked
(tests/live/inbox_harness.py).
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.live.axe_scan import serious_violations
from tests.live.inbox_demo import demo_cards
from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser


def inbox_with_context(page, view: str) -> InboxHarness:
    harness = InboxHarness(page, view=view)
    harness.open(demo_cards() + [clarification_card()])  # the first has a rationale, a ward and a taint
    return harness


@pytest.mark.parametrize("width", [1280, 390])
def test_the_queue_with_an_open_card_has_no_serious_violations(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    harness = inbox_with_context(page, "queue")
    page.get_by_test_id("queue-row").first.click()
    assert serious_violations(page) == [], json.dumps(serious_violations(page), indent=1)
    assert harness.page_errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_every_card_in_full_has_no_serious_violations(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    inbox_with_context(page, "full")
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)


def test_the_high_risk_confirmation_has_no_serious_violations(page):
    harness = InboxHarness(page, view="queue")
    card = approval_card(tier="high")
    harness.open([card])
    page.keyboard.press("j")
    page.keyboard.press("a")
    page.get_by_test_id("confirm-panel").wait_for()
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)


def test_no_two_cards_have_controls_of_the_same_name(page):
    """Nine cards in full: each card's Approve (and every other control) is named for its card."""
    harness = InboxHarness(page, view="full")
    cards = [approval_card(tier="low", patient_ref=f"MRN-5000{i}") for i in range(9)]
    harness.open(cards)
    expect(page.get_by_test_id("approve")).to_have_count(9)
    assert page.get_by_role("button", name="Approve", exact=True).count() == 0
    for card in cards:
        patient = card["session"]["patient_ref"]
        # The visible text first, then which card: a speech-input user says what they see.
        for testid, text in (
            ("approve", "Approve"),
            ("reject", "Reject…"),
            ("edit", "Edit args"),
            ("claim-toggle", "Claim"),
            ("stop-run", "Stop run…"),
        ):
            control = harness.card(card["id"]).get_by_test_id(testid)
            expect(control).to_have_accessible_name(re.compile(rf"^{re.escape(text)} .*{patient}$"))
        summary = harness.card(card["id"]).locator("summary", has_text="Technical details")
        expect(summary).to_have_accessible_name(re.compile(rf"^Technical details .*{patient}$"))
    harness.card(cards[0]["id"]).get_by_test_id("reject").click()
    patient = cards[0]["session"]["patient_ref"]
    expect(harness.card(cards[0]["id"]).get_by_test_id("reject-reason")).to_have_accessible_name(
        re.compile(rf"^Reason for rejecting.*{patient}$")
    )
    expect(harness.card(cards[0]["id"]).get_by_test_id("reject-submit")).to_have_accessible_name(
        re.compile(rf"^Reject .*{patient}$")
    )
    # Claim becomes Release: the name follows the text.
    harness.card(cards[1]["id"]).get_by_test_id("claim-toggle").click()
    expect(harness.card(cards[1]["id"]).get_by_test_id("claim-toggle")).to_have_accessible_name(
        re.compile(rf"^Release .*{cards[1]['session']['patient_ref']}$")
    )


def test_a_skip_link_goes_from_the_queue_to_the_open_card(page):
    # Side by side, from 961 px; narrower, the open card takes the queue's place.
    harness = InboxHarness(page, view="queue")
    first, second = (
        approval_card(tier="high", patient_ref="MRN-60001"),
        approval_card(tier="low", patient_ref="MRN-60002"),
    )
    harness.open([first, second])
    page.get_by_test_id("queue-row").nth(1).click()
    page.get_by_test_id("queue-search").focus()
    page.keyboard.press("Shift+Tab")
    link = page.get_by_test_id("skip-to-card")
    expect(link).to_be_focused()
    expect(link).to_be_visible()
    expect(link).to_have_accessible_name("Skip to the open card")
    box = link.bounding_box()
    assert box["height"] >= 24 and box["width"] > 40, box  # shown once focused, not a 1 px box
    page.keyboard.press("Enter")
    expect(harness.card(second["id"])).to_be_focused()
    page.keyboard.press("a")  # the focused card is the one a key acts on
    assert harness.wait_for_decisions(1)[0].approval_id == second["id"]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_bulk_selection_and_its_panel_have_no_serious_violations(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    harness = InboxHarness(page, view="queue", quick_reasons=("Duplicate of an existing order", "Wrong patient"))
    harness.open(
        [approval_card(tier="low", patient_ref=f"MRN-9500{i}") for i in range(3)] + [approval_card(tier="high")]
    )
    boxes = page.get_by_test_id("bulk-select")
    expect(boxes).to_have_count(3)  # the high-risk line has none
    boxes.nth(0).check()
    boxes.nth(2).check()
    page.get_by_test_id("bulk-reject").click()
    expect(page.get_by_test_id("bulk-panel").get_by_test_id("quick-reason")).to_have_count(2)
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)
    assert harness.page_errors == []
