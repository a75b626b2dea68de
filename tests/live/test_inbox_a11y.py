"""axe-core on the inbox (issue 14): no serious or critical violations, desktop and phone,
in the queue with a card open and with every card in full.

axe-core (tests/live/axe_scan.py) runs in the page; the server is mocked
(tests/live/inbox_harness.py).
"""

from __future__ import annotations

import json

import pytest

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
