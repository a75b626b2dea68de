"""SPEC section 10 on the card, in real Chromium (websocket mocked by tests/live/inbox_harness.py).

A claim pushed as card.updated shows "rita is reviewing" at once, and goes when it is
released or runs out; a four-eyes card shows "1 of 2 approvals"; an escalated card
shows its badge and goes first; a high-risk card arriving while the tab is hidden
raises a browser notification (permission asked once, on the first click).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.errors import ApprovalClaimed
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser


def test_a_claim_shows_on_the_card_live_and_goes_when_released(inbox):
    card = approval_card(tier="high")
    inbox.open([card])
    badge = inbox.card(card["id"]).get_by_test_id("card-claim")
    expect(badge).to_be_hidden()

    inbox.rows.claim(card["id"], "rob")  # the page is rita's
    inbox.update(card["id"])
    expect(badge).to_be_visible()
    expect(badge).to_have_text("rob is reviewing")

    inbox.rows.release(card["id"])
    inbox.update(card["id"])
    expect(badge).to_be_hidden()


def test_another_reviewers_claim_locks_the_decision_and_says_why(inbox):
    card = approval_card(tier="high", claimed_by="rob")
    inbox.open([card])
    shown = inbox.card(card["id"])
    for control in ("approve", "reject", "edit", "claim-toggle"):
        expect(shown.get_by_test_id(control)).to_be_disabled()
    expect(shown.get_by_test_id("claim-note")).to_contain_text(
        "rob is reviewing this card, so you cannot decide it now"
    )

    inbox.rows.release(card["id"])
    inbox.update(card["id"])
    expect(shown.get_by_test_id("approve")).to_be_enabled()
    expect(shown.get_by_test_id("claim-toggle")).to_have_text("Claim")


def test_a_claim_the_page_has_not_heard_of_yet_keeps_the_card_with_the_servers_words(inbox):
    card = approval_card(tier="low")
    inbox.open([card])
    inbox.refuse_next(card["id"], ApprovalClaimed("rob is reviewing this approval."))
    inbox.card(card["id"]).get_by_test_id("approve").click()
    expect(inbox.card(card["id"]).get_by_test_id("card-error")).to_contain_text("rob is reviewing this approval")
    expect(inbox.card(card["id"]).get_by_test_id("approve")).to_be_enabled()


def test_the_holder_sees_their_own_claim_and_can_still_decide(inbox):
    card = approval_card(claimed_by="rita")  # the page is rita's
    inbox.open([card])
    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("card-claim")).to_contain_text("You are reviewing")
    expect(shown.get_by_test_id("claim-toggle")).to_have_text("Release")
    expect(shown.get_by_test_id("approve")).to_be_enabled()


def test_a_claim_that_runs_out_stops_showing(inbox):
    frozen = inbox.open_with_clock_stopped()
    card = approval_card(claimed_by="rob", claim_seconds=90, now=frozen)
    inbox.add(card)
    badge = inbox.card(card["id"]).get_by_test_id("card-claim")
    expect(badge).to_have_text("rob is reviewing")

    inbox.page.clock.run_for(89_000)
    expect(badge).to_have_text("rob is reviewing")
    inbox.page.clock.run_for(2_000)
    expect(badge).to_be_hidden()


def test_a_four_eyes_card_counts_its_approvals(inbox):
    card = approval_card(tier="high", tool="sign_document", op="sign")  # the registry asks two reviewers
    inbox.open([card])
    quorum = inbox.card(card["id"]).get_by_test_id("card-quorum")
    expect(quorum).to_have_text("0 of 2 approvals")

    assert not inbox.rows.decide(card["id"], "approved", "rita")  # one of two: still pending
    inbox.update(card["id"])
    expect(quorum).to_have_text("1 of 2 approvals")


def test_a_single_approval_card_shows_no_count(inbox):
    card = approval_card()
    inbox.open([card])
    expect(inbox.card(card["id"]).get_by_test_id("card-quorum")).to_be_hidden()


def test_an_escalated_card_shows_the_badge_and_goes_first(inbox):
    high = approval_card(tier="high", expires_in=100)
    low = approval_card(tier="low", expires_in=900)
    inbox.open([high, low])
    assert inbox.displayed_ids() == [high["id"], low["id"]]

    inbox.rows.escalate(low["id"])
    inbox.update(low["id"])
    expect(inbox.card(low["id"]).get_by_test_id("card-escalated")).to_be_visible()
    expect(inbox.card(high["id"]).get_by_test_id("card-escalated")).to_be_hidden()
    expect(inbox.cards().first).to_have_attribute("data-approval-id", low["id"])


# A stand-in for the browser's Notification (granted), and a tab that can be hidden on demand.
FAKE_NOTIFICATIONS = """
window.__notes = [];
window.__hidden = false;
window.Notification = class {
  constructor(title, options) { window.__notes.push({ title, body: options.body, tag: options.tag }); }
  static get permission() { return 'granted'; }
  static requestPermission() { return Promise.resolve('granted'); }
};
Object.defineProperty(document, 'visibilityState', { get: () => (window.__hidden ? 'hidden' : 'visible') });
"""


def test_a_high_risk_card_arriving_while_the_tab_is_hidden_notifies(inbox):
    inbox.page.add_init_script(FAKE_NOTIFICATIONS)
    inbox.open([])
    inbox.add(approval_card(tier="high", tool="prescribe_medication", op="create", patient_ref="MRN-1"))
    inbox.page.evaluate("window.__hidden = true")
    low = approval_card(tier="low")
    high = approval_card(tier="high", tool="sign_document", op="sign", patient_ref="MRN-2")
    inbox.add(low)
    inbox.add(high)
    expect(inbox.card(high["id"])).to_be_visible()
    notes = inbox.page.evaluate("window.__notes")
    assert notes == [
        {
            "title": "High-risk card waiting for a decision",
            "body": "sign_document · sign (MRN-2)",
            "tag": f"condor-card-{high['id']}",
        }
    ]


def test_a_high_risk_card_a_poll_brings_while_the_tab_is_hidden_notifies(inbox):
    # The socket is down: the poll, not a card.added push, brings the card.
    from tests.live.test_inbox_ui_fallback import polling_inbox

    inbox.page.add_init_script(FAKE_NOTIFICATIONS)
    there = approval_card(tier="high", tool="prescribe_medication", op="create", patient_ref="MRN-1")
    polling_inbox(inbox, [there])
    expect(inbox.card(there["id"])).to_be_visible()
    inbox.page.evaluate("window.__hidden = true")
    high = approval_card(tier="high", tool="sign_document", op="sign", patient_ref="MRN-2")
    inbox.add(approval_card(tier="low"))
    inbox.add(high)
    expect(inbox.card(high["id"])).to_be_attached()
    assert inbox.page.evaluate("window.__notes") == [
        {
            "title": "High-risk card waiting for a decision",
            "body": "sign_document · sign (MRN-2)",
            "tag": f"condor-card-{high['id']}",
        }
    ]


def test_a_high_risk_card_a_snapshot_brings_while_the_tab_is_hidden_notifies(inbox):
    # A resync after a team edit (or a reconnect) sends the first page again: what it brings is new here.
    inbox.page.add_init_script(FAKE_NOTIFICATIONS)
    there = approval_card(tier="high", tool="prescribe_medication", op="create", patient_ref="MRN-1")
    inbox.open([there])
    inbox.page.evaluate("window.__hidden = true")
    high = approval_card(tier="high", tool="sign_document", op="sign", patient_ref="MRN-2")
    inbox.keep(high)
    inbox.send({"type": "snapshot", **inbox.rows.page()})
    expect(inbox.card(high["id"])).to_be_attached()
    assert [note["tag"] for note in inbox.page.evaluate("window.__notes")] == [f"condor-card-{high['id']}"]


def test_permission_is_asked_once_on_the_first_click(inbox):
    inbox.page.add_init_script("""
        window.__asked = 0;
        window.Notification = class {
          static get permission() { return 'default'; }
          static requestPermission() { window.__asked += 1; return Promise.resolve('default'); }
        };
    """)
    card = approval_card()
    inbox.open([card])
    assert inbox.page.evaluate("window.__asked") == 0  # never on load: no gesture asked for it
    inbox.card(card["id"]).click()
    inbox.page.locator("body").click()
    assert inbox.page.evaluate("window.__asked") == 1
