"""axe-core on the inbox (issue 14): no serious or critical violations, desktop and phone,
in the queue with a card open and with every card in full.

axe-core is the npm package pinned in tests/package.json (`cd tests && npm ci`), injected
into the page by Playwright; the server is mocked (tests/live/inbox_harness.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.live.inbox_fixtures import chromium, page  # noqa: F401 - pytest fixtures
from tests.live.inbox_harness import InboxHarness, demo_cards
from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parents[1] / "node_modules" / "axe-core" / "axe.min.js"


def serious_violations(page) -> list[dict]:
    if not AXE.is_file():
        pytest.skip("axe-core is not installed: run `cd tests && npm ci`")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, { resultTypes: ['violations'] })")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "targets": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


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
