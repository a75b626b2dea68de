"""Cards of one run together, and stopping a run, in real Chromium (decision and stop API mocked).

A rejection denies one call; "Reject and stop the run" and "Stop run" end the run and
withdraw every card it holds open, so the page must name those cards before the click.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.errors import ApprovalClaimed
from runs.states import RunState, TerminalReason
from tests.live.card_actions import reject
from tests.live.inbox_http import Reply
from tests.live.inbox_page import CSRF_TOKEN
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser

RUN = "7f3c2a10-0000-4000-8000-000000000001"
REASON = "Wrong patient: this is bed 7, not bed 9."


@pytest.fixture
def one_run(inbox):
    """Two pending cards of RUN, one grant it holds, and a card of another run more urgent than either."""
    grant = approval_card(tool="order_lab", op="create", run_id=RUN)
    inbox.keep(grant)
    inbox.rows.decide(grant["id"], "approved", "alice")
    first = approval_card(tool="prescribe_medication", run_id=RUN, expires_in=500)
    second = approval_card(tool="sign_document", op="sign", run_id=RUN, expires_in=900)  # four eyes
    other = approval_card(tool="bill_encounter", expires_in=700)
    return first, second, other


@pytest.fixture
def opened_run(inbox, one_run):
    """`one_run`'s cards on the page."""
    inbox.open(list(one_run))
    return one_run


def test_the_cards_of_one_run_are_shown_together(inbox, one_run):
    first, second, other = one_run
    inbox.open([other, second, first])
    # The run's most urgent card leads its group; its sibling follows it, ahead of the other run.
    assert inbox.displayed_ids() == [first["id"], second["id"], other["id"]]
    expect(inbox.card(first["id"])).to_have_attribute("data-run-pos", "first")
    expect(inbox.card(second["id"])).to_have_attribute("data-run-pos", "last")
    expect(inbox.card(other["id"])).to_have_attribute("data-run-pos", "only")
    bar = inbox.card(first["id"]).get_by_test_id("card-run")
    expect(bar).to_contain_text("Agent run")
    expect(inbox.card(first["id"]).get_by_test_id("card-run-id")).to_have_text(RUN)  # in the technical details
    expect(bar).to_contain_text("sign_document · sign (waiting for a decision)")
    expect(bar).to_contain_text("order_lab · create (approved by alice, not yet run)")
    expect(inbox.card(other["id"]).get_by_test_id("card-run")).to_contain_text("the only open card of this run")


def test_reject_offers_stopping_the_run_and_names_what_it_withdraws(inbox, opened_run):
    first, second, other = opened_run
    shown = inbox.card(first["id"])
    shown.get_by_test_id("reject").click()
    warning = shown.get_by_test_id("reject-stop-warning")
    expect(warning).to_contain_text("sign_document · sign")
    expect(warning).to_contain_text("order_lab · create (approved by alice, not yet run)")
    expect(warning).not_to_contain_text("bill_encounter")
    expect(shown.get_by_test_id("reject-submit")).to_have_text("Reject")
    expect(shown.get_by_test_id("reject-stop-submit")).to_be_disabled()


def test_a_plain_reject_denies_one_card_and_keeps_its_siblings(inbox, opened_run):
    first, second, other = opened_run
    shown = inbox.card(first["id"])
    reject(shown, REASON)
    assert inbox.wait_for_decisions(1)[0].body == {"approved": False, "reason": REASON}
    expect(shown).to_have_count(0)
    expect(inbox.card(second["id"])).to_have_attribute("data-run-pos", "only")
    expect(inbox.card(second["id"]).get_by_test_id("card-run")).not_to_contain_text("prescribe_medication")


def test_reject_and_stop_sends_stop_run_and_withdraws_the_run(inbox, opened_run):
    first, second, other = opened_run
    shown = inbox.card(first["id"])
    reject(shown, REASON, submit="reject-stop-submit")
    assert inbox.wait_for_decisions(1)[0].body == {"approved": False, "reason": REASON, "stop_run": True}
    expect(inbox.card(first["id"])).to_have_count(0)
    expect(inbox.card(second["id"])).to_have_count(0)
    expect(inbox.card(other["id"])).to_have_count(1)
    expect(inbox.feedback).to_contain_text("stopped the run")


def test_stop_run_names_every_card_it_withdraws_and_posts_the_reason(inbox, opened_run):
    first, second, other = opened_run
    shown = inbox.card(second["id"])
    shown.get_by_test_id("stop-run").click()
    warning = shown.get_by_test_id("stop-warning")
    expect(warning).to_contain_text("withdraws this card")
    expect(warning).to_contain_text("prescribe_medication · create (waiting for a decision)")
    expect(warning).to_contain_text("order_lab · create (approved by alice, not yet run)")
    submit = shown.get_by_test_id("stop-submit")
    expect(submit).to_be_disabled()
    shown.get_by_test_id("stop-reason").fill(REASON)
    submit.click()
    (stop,) = inbox.wait_for_stops(1)
    assert (stop.approval_id, stop.body, stop.headers["x-csrftoken"]) == (RUN, {"reason": REASON}, CSRF_TOKEN)
    expect(inbox.card(first["id"])).to_have_count(0)
    expect(inbox.card(second["id"])).to_have_count(0)
    expect(inbox.card(other["id"])).to_have_count(1)
    expect(inbox.feedback).to_contain_text("2 cards withdrawn")


def test_a_sibling_approved_elsewhere_becomes_a_grant_of_the_run(inbox, opened_run):
    first, second, other = opened_run
    inbox.rows.decide(second["id"], "approved", "alice")  # the first of its two approvals
    inbox.remove(second["id"], status="approved", decided_by="bob")
    bar = inbox.card(first["id"]).get_by_test_id("card-run")
    expect(bar).to_contain_text("sign_document · sign (approved by bob, not yet run)")
    # The agent used it: the run holds it no more.
    inbox.remove(second["id"], status="consumed", decided_by=None)
    expect(bar).not_to_contain_text("sign_document")


def test_a_run_that_already_ended_is_said_plainly(inbox, opened_run):
    first, second, other = opened_run
    inbox.stop_replies.append(Reply(ended=(RunState.COMPLETED, TerminalReason.COMPLETED)))
    shown = inbox.card(first["id"])
    shown.get_by_test_id("stop-run").click()
    shown.get_by_test_id("stop-reason").fill(REASON)
    shown.get_by_test_id("stop-submit").click()
    expect(inbox.feedback).to_contain_text("had already ended (completed)")
    expect(inbox.card(first["id"])).to_have_count(0)
    expect(inbox.card(second["id"])).to_have_count(0)


def test_a_stop_refused_for_another_reviewers_claim_says_who_and_keeps_the_reason(inbox, opened_run):
    first, second, _ = opened_run
    inbox.stop_replies.append(
        Reply(error=ApprovalClaimed("rob is reviewing a card of this run (sign_document · sign)."))
    )
    shown = inbox.card(first["id"])
    shown.get_by_test_id("stop-run").click()
    shown.get_by_test_id("stop-reason").fill(REASON)
    shown.get_by_test_id("stop-submit").click()
    expect(shown.get_by_test_id("card-error")).to_contain_text("Not stopped: rob is reviewing a card of this run")
    expect(shown.get_by_test_id("stop-reason")).to_have_value(REASON)
    expect(inbox.card(second["id"])).to_have_count(1)
