"""Governance's quick rejection reasons in the reject form, in real Chromium (server played by
tests/live/inbox_harness.py): one click puts a reason in the box, which stays editable; a question's
decline form offers none."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser

REASONS = ("Duplicate of an existing order", "Wrong patient")


def test_a_quick_reason_fills_the_reason_box_and_can_be_edited(page):
    harness = InboxHarness(page, quick_reasons=REASONS)
    card = approval_card(tier="high", patient_ref="MRN-94001")
    harness.open([card])
    el = harness.card(card["id"])
    el.get_by_test_id("reject").click()
    picks = el.get_by_test_id("quick-reason")
    expect(picks).to_have_text(list(REASONS))
    expect(el.get_by_role("group", name="Quick reasons")).to_be_visible()
    expect(picks.nth(1)).to_have_accessible_name(re.compile(r"^Wrong patient .*MRN-94001$"))  # which card it acts on
    picks.nth(1).click()
    reason = el.get_by_test_id("reject-reason")
    expect(reason).to_have_value("Wrong patient")
    expect(reason).to_be_focused()
    expect(el.get_by_test_id("reject-submit")).to_be_enabled()
    page.keyboard.type(": MRN belongs to bed 4")
    el.get_by_test_id("reject-submit").click()
    [decision] = harness.wait_for_decisions(1)
    assert decision.body["reason"] == "Wrong patient: MRN belongs to bed 4"


def test_a_declined_question_offers_no_quick_reasons(page):
    harness = InboxHarness(page, quick_reasons=REASONS)
    question = clarification_card()
    harness.open([question])
    el = harness.card(question["id"])
    el.get_by_test_id("decline").click()
    expect(el.get_by_test_id("reject-reason")).to_be_focused()
    expect(el.get_by_test_id("quick-reason")).to_have_count(0)


def test_no_reasons_set_means_no_row_of_buttons(page):
    harness = InboxHarness(page)
    card = approval_card(tier="low")
    harness.open([card])
    harness.card(card["id"]).get_by_test_id("reject").click()
    expect(harness.card(card["id"]).get_by_test_id("quick-reasons")).to_be_hidden()
