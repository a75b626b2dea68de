"""Cards withdrawn under the reviewer, and four eyes, in real Chromium (the server mocked by tests/live/inbox_harness.py).

SPEC 4: a card whose run is superseded, stopped or closed is withdrawn and said so.
A reviewer working on it keeps it on screen, every decision off, saying "Withdrawn:
the agent started a new run", with what they typed, until they dismiss it. SPEC 10:
the first approver of a four-eyes card keeps it in their list as "You approved (1 of
2) — waiting for a second reviewer", Approve off, also after a reload; every card says
who approved so far in plain text.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from core.errors import AlreadyApprovedByYou
from tests.live.axe_scan import serious_violations
from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser

TYPED = "Penicillin allergy on file; ask the prescriber."


def typing_a_rejection(inbox, card) -> None:
    shown = inbox.card(card["id"])
    shown.get_by_test_id("reject").click()
    shown.get_by_test_id("reject-reason").fill(TYPED)


# ------------------------------------------------------------------ withdrawn


def test_a_new_run_withdraws_the_card_and_the_typed_reason_stays(inbox):
    card = approval_card(tier="high")
    inbox.open([card])
    typing_a_rejection(inbox, card)

    inbox.withdraw(card["id"], cause="superseded")

    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("card-withdrawn")).to_contain_text("Withdrawn: the agent started a new run")
    expect(shown.get_by_test_id("reject-reason")).to_have_value(TYPED)
    for control in ("reject-submit", "reject-stop-submit", "claim-toggle", "stop-run"):
        expect(shown.get_by_test_id(control)).to_be_disabled()
    expect(shown.get_by_test_id("countdown")).to_have_text("Withdrawn")
    expect(inbox.feedback).to_contain_text("Withdrawn: the agent started a new run")
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("0")  # it waits for nothing


def test_dismissing_a_withdrawn_card_puts_it_away(inbox):
    card = approval_card()
    inbox.open([card])
    typing_a_rejection(inbox, card)
    inbox.withdraw(card["id"])

    inbox.card(card["id"]).get_by_test_id("dismiss-withdrawn").click()

    expect(inbox.card(card["id"])).to_have_count(0)


def test_an_edit_in_progress_stays_and_names_who_stopped_the_run(inbox):
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])
    shown = inbox.card(card["id"])
    shown.get_by_test_id("edit").click()
    shown.get_by_test_id("args-editor").fill('{"dose_mg": 250}')

    inbox.withdraw(card["id"], cause="user_stopped", stopped_by="rob")

    expect(shown.get_by_test_id("card-withdrawn")).to_contain_text("Withdrawn: rob stopped the run")
    expect(shown.get_by_test_id("args-editor")).to_have_value('{"dose_mg": 250}')
    expect(shown.get_by_test_id("approve-edited")).to_be_disabled()


def test_a_snapshot_after_the_withdrawal_keeps_the_card_until_dismissed(inbox):
    card = approval_card()
    inbox.open([card])
    typing_a_rejection(inbox, card)
    inbox.withdraw(card["id"])

    inbox.drop_connection()  # the page reconnects and gets a snapshot without the card
    inbox.wait_for_connections(2)
    inbox.frames_taken()

    expect(inbox.card(card["id"]).get_by_test_id("reject-reason")).to_have_value(TYPED)


def test_a_card_nobody_is_working_on_just_goes(inbox):
    card = approval_card()
    inbox.open([card])

    inbox.withdraw(card["id"])

    expect(inbox.card(card["id"])).to_have_count(0)


def test_a_withdrawal_while_the_rejection_is_on_its_way_keeps_the_card(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.during_next(card["id"], lambda: inbox.withdraw(card["id"]))
    typing_a_rejection(inbox, card)

    inbox.card(card["id"]).get_by_test_id("reject-submit").click()

    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("card-error")).to_contain_text("Not applied: Withdrawn: the agent started a new run")
    expect(shown.get_by_test_id("reject-reason")).to_have_value(TYPED)


def test_a_refusal_before_the_withdrawal_reaches_the_page_keeps_the_text_until_it_does(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.rows.decide(card["id"], "withdrawn", None)  # withdrawn on the server, its push not here yet
    typing_a_rejection(inbox, card)

    inbox.card(card["id"]).get_by_test_id("reject-submit").click()

    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("card-withdrawn")).to_contain_text("stopped waiting for a decision")
    expect(shown.get_by_test_id("reject-reason")).to_have_value(TYPED)
    inbox._push(inbox.rows.withdrawn(card["id"], "superseded", None))
    expect(shown.get_by_test_id("card-withdrawn")).to_contain_text("Withdrawn: the agent started a new run")


def test_the_withdrawn_card_has_no_serious_accessibility_violations(page):
    harness = InboxHarness(page, view="queue")
    card = approval_card(tier="high")
    harness.open([card])
    page.get_by_test_id("queue-row").first.click()
    typing_a_rejection(harness, card)
    harness.withdraw(card["id"])
    harness.card(card["id"]).get_by_test_id("card-withdrawn").wait_for()
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)


# ------------------------------------------------------------------ four eyes


def four_eyes_card():
    return approval_card(tier="high", tool="sign_document", op="sign")  # the registry asks two reviewers


def test_the_first_approver_keeps_the_card_as_waiting_for_a_second_reviewer(inbox):
    card = four_eyes_card()
    inbox.open([card])
    shown = inbox.card(card["id"])
    shown.get_by_test_id("approve").click()
    shown.get_by_test_id("confirm-approve").click()

    expect(shown.get_by_test_id("card-my-approval")).to_contain_text(
        "You approved (1 of 2) — waiting for a second reviewer"
    )
    expect(shown.get_by_test_id("approve")).to_be_disabled()
    expect(shown.get_by_test_id("edit")).to_be_disabled()
    expect(shown.get_by_test_id("reject")).to_be_enabled()
    expect(shown.get_by_test_id("card-approvals")).to_contain_text("Approved so far: rita at")
    expect(inbox.feedback).to_contain_text("You approved (1 of 2)")


def test_after_a_reload_the_first_approver_still_sees_approve_off(inbox):
    card = four_eyes_card()
    inbox.keep(card)
    assert not inbox.rows.decide(card["id"], "approved", "rita", reason="Signature checked.")  # one of two
    inbox.open([card])

    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("card-my-approval")).to_contain_text(
        "You approved (1 of 2) — waiting for a second reviewer"
    )
    expect(shown.get_by_test_id("approve")).to_be_disabled()
    expect(shown.get_by_test_id("card-approvals")).to_contain_text("rita")
    expect(shown.get_by_test_id("card-approvals")).to_contain_text("“Signature checked.”")


def test_another_reviewer_sees_who_approved_without_hovering(inbox):
    card = four_eyes_card()
    inbox.keep(card)
    assert not inbox.rows.decide(card["id"], "approved", "rob", reason="Looks right.")
    inbox.open([card])  # rita's page

    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("card-approvals")).to_be_visible()
    expect(shown.get_by_test_id("card-approvals")).to_contain_text("Approved so far: rob at")
    expect(shown.get_by_test_id("card-approvals")).to_contain_text("“Looks right.”")
    expect(shown.get_by_test_id("card-my-approval")).to_be_hidden()
    expect(shown.get_by_test_id("approve")).to_be_enabled()


def test_a_stale_page_told_already_approved_shows_the_state_not_an_error(inbox):
    card = four_eyes_card()
    inbox.open([card])
    inbox.refuse_next(card["id"], AlreadyApprovedByYou())
    shown = inbox.card(card["id"])
    shown.get_by_test_id("approve").click()
    shown.get_by_test_id("confirm-approve").click()

    expect(shown.get_by_test_id("card-my-approval")).to_contain_text("You approved")
    expect(shown.get_by_test_id("approve")).to_be_disabled()
    expect(shown.get_by_test_id("card-error")).to_be_hidden()
    expect(inbox.feedback).not_to_contain_text("HTTP 409")


def test_an_edit_by_another_reviewer_restarts_the_count_and_approve_comes_back(inbox):
    card = four_eyes_card()
    inbox.keep(card)
    assert not inbox.rows.decide(card["id"], "approved", "rita")
    inbox.open([card])
    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("approve")).to_be_disabled()

    assert not inbox.rows.decide(card["id"], "approved", "rob", edited_args={"document_id": "d-8"})
    inbox.update(card["id"])

    expect(shown.get_by_test_id("approve")).to_be_enabled()
    expect(shown.get_by_test_id("card-approvals")).to_contain_text("rob")
    expect(shown.get_by_test_id("card-approvals")).not_to_contain_text("rita")


def approved_by_rita_in_the_queue(page) -> tuple[InboxHarness, dict]:
    """Rita's page, in the compact queue, on a four-eyes card she has approved once."""
    harness = InboxHarness(page, view="queue")
    card = four_eyes_card()
    harness.keep(card)
    assert not harness.rows.decide(card["id"], "approved", "rita")
    harness.open([card])
    return harness, card


def test_the_queue_line_says_you_approved(page):
    harness, _ = approved_by_rita_in_the_queue(page)
    expect(page.get_by_test_id("queue-my-approval")).to_have_text("You approved (1 of 2)")
    assert harness.page_errors == []


def test_the_first_approvers_card_has_no_serious_accessibility_violations(page):
    harness, card = approved_by_rita_in_the_queue(page)
    page.get_by_test_id("queue-row").first.click()
    harness.card(card["id"]).get_by_test_id("card-my-approval").wait_for()
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)
