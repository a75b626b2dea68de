"""Claims end to end: rob claims a card, rita's open inbox shows it live and cannot decide it.

Debian's Chromium on a real daphne, PostgreSQL and Redis, as test_inbox_e2e.py.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from approvals.models import Approval
from tests.helpers.personas import person
from tests.live.inbox_fixtures import page  # noqa: F401 - the fixture that keeps a screenshot on failure
from tests.live.inbox_harness import CHROMIUM
from tests.live.test_inbox_e2e import browser_page, chromium, inbox, park_prescription  # noqa: F401 - fixtures
from tests.live.wire import LiveBrowser

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_a_claim_shows_live_and_the_other_reviewer_cannot_decide(inbox, live_agent, daphne_server):
    _, approval = park_prescription(live_agent)
    card = inbox.open_card(approval["id"])  # from its line in the queue
    expect(card.get_by_test_id("card-claim")).to_be_hidden()

    rob = LiveBrowser(daphne_server.host, person("rob", "reviewers"))
    claimed = rob.post(f"/api/v1/approvals/{approval['id']}/claim/", "{}",
                       HTTP_X_CSRFTOKEN=rob.cookies["csrftoken"].value)
    assert claimed.status_code == 200, claimed

    expect(card.get_by_test_id("card-claim")).to_have_text("rob is reviewing")
    card.get_by_test_id("approve").click()
    card.get_by_test_id("confirm-approve").click()  # a high-risk approval is confirmed first
    expect(card.get_by_test_id("card-error")).to_contain_text("rob is reviewing this approval")
    expect(card).to_have_count(1)
    assert Approval.objects.get(pk=approval["id"]).status == "pending"
