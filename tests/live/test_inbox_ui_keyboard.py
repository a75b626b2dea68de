"""Keyboard review in real Chromium, websocket and decision API mocked: j/k select, a approves, r rejects, e edits.

The page is the production template and tests/live/inbox_harness.py plays the server.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser


# --------------------------------------------------------------------------- keyboard


def test_j_and_k_move_the_selection_and_a_approves(inbox):
    # Low risk: "a" approves at once (a high-risk card asks first: test_a_on_a_high_risk_card_asks_first).
    first, second, third = (approval_card(tier="low", expires_in=s) for s in (100, 200, 300))
    inbox.open([first, second, third])
    keyboard = inbox.page.keyboard

    keyboard.press("j")
    expect(inbox.card(first["id"])).to_be_focused()
    keyboard.press("j")
    keyboard.press("j")
    expect(inbox.card(third["id"])).to_have_class(re.compile(r"\bis-selected\b"))
    keyboard.press("k")
    expect(inbox.card(second["id"])).to_be_focused()
    expect(inbox.page.locator(".card.is-selected")).to_have_count(1)

    keyboard.press("a")

    assert inbox.wait_for_decisions(1)[0].approval_id == second["id"]
    expect(inbox.card(second["id"])).to_have_count(0)
    # After a decision the next card is selected and focused (test_inbox_ui_next_card.py); k goes back up.
    expect(inbox.card(third["id"])).to_be_focused()
    expect(inbox.page.locator(".card.is-selected")).to_have_count(1)
    keyboard.press("k")
    expect(inbox.card(first["id"])).to_be_focused()


def test_r_opens_the_reason_and_typing_is_not_a_shortcut(inbox):
    card, other = approval_card(tier="high"), approval_card(tier="low")
    inbox.open([card, other])
    keyboard = inbox.page.keyboard

    keyboard.press("j")
    keyboard.press("r")
    reason = inbox.card(card["id"]).get_by_test_id("reject-reason")
    expect(reason).to_be_focused()
    keyboard.type("jka reason")
    expect(reason).to_have_value("jka reason")
    expect(inbox.card(card["id"])).to_have_class(re.compile(r"\bis-selected\b"))
    assert inbox.decisions == []

    keyboard.press("Escape")
    expect(inbox.card(card["id"]).get_by_test_id("reject-panel")).to_be_hidden()
    expect(inbox.card(card["id"])).to_be_focused()


def test_e_opens_the_editor_and_escape_cancels(inbox):
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])

    inbox.page.keyboard.press("j")
    inbox.page.keyboard.press("e")
    editor = inbox.card(card["id"]).get_by_test_id("args-editor")
    expect(editor).to_be_focused()
    inbox.page.keyboard.press("Escape")

    expect(inbox.card(card["id"]).get_by_test_id("edit-panel")).to_be_hidden()


def test_r_opens_the_decline_panel_on_a_clarification(inbox):
    card = clarification_card()
    inbox.open([card])
    keyboard = inbox.page.keyboard

    keyboard.press("j")
    keyboard.press("r")
    shown = inbox.card(card["id"])
    reason = shown.get_by_test_id("reject-reason")
    expect(reason).to_be_focused()
    keyboard.type("Cannot be answered from the notes")
    keyboard.press("Control+Enter")

    assert inbox.wait_for_decisions(1)[0].body == {"approved": False, "reason": "Cannot be answered from the notes"}
    expect(shown).to_have_count(0)


def test_a_does_not_approve_a_clarification(inbox):
    card = clarification_card()
    inbox.open([card])

    inbox.page.keyboard.press("j")
    inbox.page.keyboard.press("a")

    inbox.round_trip()
    assert inbox.decisions == []
