"""Claims and four eyes end to end (SPEC section 10): two reviewers, two browsers, one card.

Rob claims the card from his inbox; Rita's open inbox shows it live and will not let
her decide, saying why; Rob releases it and Rita approves. A signature needs both:
Rita's approval leaves it pending and in her list as "You approved (1 of 2)", Approve off, after a
reload too, counted live in Rob's, until Rob approves. Debian's Chromium on a real
daphne, PostgreSQL and Redis, as test_inbox_e2e.py.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from approvals.models import Approval
from tests.helpers.approval_loop import suspend
from tests.helpers.runs import open_executing_run
from tests.live.browser import CHROMIUM
from tests.live.e2e_fixtures import signed_in
from tests.live.test_inbox_e2e import (  # noqa: F401 - fixtures
    WARD_SESSION,
    browser_page,
    chromium,
    inbox,
    park_prescription,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


@pytest.fixture
def robs_inbox(chromium, daphne_server, rob):
    with signed_in(chromium, daphne_server, "rob") as robs:
        yield robs


def test_a_claim_made_in_one_inbox_locks_the_other_until_it_is_released(inbox, robs_inbox, live_agent):
    _, approval = park_prescription(live_agent)
    ritas_card = inbox.open_card(approval["id"])
    robs_card = robs_inbox.open_card(approval["id"])
    expect(ritas_card.get_by_test_id("card-claim")).to_be_hidden()

    # Rob claims it by keyboard: the Claim control is an ordinary button.
    robs_card.get_by_test_id("claim-toggle").focus()
    robs_inbox.page.keyboard.press("Enter")
    expect(robs_card.get_by_test_id("card-claim")).to_contain_text("You are reviewing")
    expect(robs_card.get_by_test_id("claim-toggle")).to_have_text("Release")
    assert Approval.objects.get(pk=approval["id"]).claimed_by.username == "rob"

    # Rita's page learns it from the push, and says why she cannot decide.
    expect(ritas_card.get_by_test_id("card-claim")).to_have_text("rob is reviewing")
    expect(ritas_card.get_by_test_id("claim-note")).to_contain_text(
        "rob is reviewing this card, so you cannot decide it now"
    )
    for control in ("approve", "reject", "edit", "claim-toggle"):
        expect(ritas_card.get_by_test_id(control)).to_be_disabled()
    assert inbox.same_document()

    robs_card.get_by_test_id("claim-toggle").click()
    expect(robs_card.get_by_test_id("claim-toggle")).to_have_text("Claim")
    expect(ritas_card.get_by_test_id("card-claim")).to_be_hidden()
    ritas_card.get_by_test_id("approve").click()
    ritas_card.get_by_test_id("confirm-approve").click()  # a high-risk approval is confirmed first

    expect(ritas_card).to_have_count(0)
    expect(robs_card).to_have_count(0)  # decided elsewhere: gone from rob's inbox too
    decided = Approval.objects.get(pk=approval["id"])
    assert (decided.status, decided.decided_by.username) == ("approved", "rita")


def test_a_four_eyes_card_needs_both_reviewers(inbox, robs_inbox, live_agent):
    run_id = open_executing_run(live_agent, **WARD_SESSION)
    approval = suspend(live_agent, run_id, tool="sign_document", op="sign", args={"document_id": "d-7"})
    ritas_card = inbox.open_card(approval["id"])
    robs_card = robs_inbox.open_card(approval["id"])
    expect(ritas_card.get_by_test_id("card-quorum")).to_have_text("0 of 2 approvals")

    ritas_card.get_by_test_id("approve").click()
    ritas_card.get_by_test_id("confirm-approve").click()  # a signature is high risk: confirmed first

    # One approval of two: the card stays in Rita's list saying so, Approve off; Rob's shows the
    # count and who approved, live, in plain text.
    waiting = "You approved (1 of 2) — waiting for a second reviewer"
    expect(ritas_card.get_by_test_id("card-my-approval")).to_contain_text(waiting)
    expect(ritas_card.get_by_test_id("approve")).to_be_disabled()
    expect(inbox.page.get_by_test_id("inbox-feedback")).to_contain_text("You approved (1 of 2)")
    expect(robs_card.get_by_test_id("card-quorum")).to_have_text("1 of 2 approvals")
    expect(robs_card.get_by_test_id("card-approvals")).to_contain_text("Approved so far: rita at")
    assert Approval.objects.get(pk=approval["id"]).status == "pending"

    # After a reload the server's card says the same: no Approve to press, no "HTTP 409, try again".
    inbox.page.reload()
    inbox.wait_live()
    ritas_card = inbox.open_card(approval["id"])
    expect(ritas_card.get_by_test_id("card-my-approval")).to_contain_text(waiting)
    expect(ritas_card.get_by_test_id("approve")).to_be_disabled()
    expect(inbox.page.get_by_test_id("queue-my-approval")).to_have_text("You approved (1 of 2)")

    robs_card.get_by_test_id("approve").click()
    robs_card.get_by_test_id("confirm-approve").click()

    expect(robs_card).to_have_count(0)
    expect(ritas_card).to_have_count(0)  # the quorum is met: decided, gone from Rita's list too
    decided = Approval.objects.get(pk=approval["id"])
    assert decided.status == "approved"
    assert [vote["reviewer"] for vote in decided.approvals] == ["rita", "rob"]
