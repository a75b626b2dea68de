"""The queue's search end to end: Debian's Chromium on a real daphne and PostgreSQL, the
search and filters answered by inbox/search.py over every pending card, not
the first page the socket sent. As test_inbox_e2e.py.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.helpers.bulk import pending_cards_in_bulk
from tests.live.browser import CHROMIUM
from tests.live.test_inbox_e2e import browser_page, chromium, inbox  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_the_queue_search_finds_every_pending_card_of_a_patient(inbox, ward_agent):
    pending_cards_in_bulk(ward_agent, 240, care_unit="Ward 6")  # MRN-0, MRN-10, ... MRN-230, ten each
    pending_cards_in_bulk(ward_agent, 54, patient_ref="MRN-20417", care_unit="Ward 4")
    inbox.page.reload()  # written straight to the database: no push told the page
    inbox.wait_live()
    page = inbox.page
    expect(page.get_by_test_id("queue-loaded")).to_have_text("100 of 294 shown")

    page.get_by_test_id("queue-search").fill("MRN-20417")
    groups = page.get_by_test_id("queue-group")
    expect(groups).to_have_count(1)
    expect(groups).to_contain_text("54 requests")
    expect(page.get_by_test_id("queue-range")).to_have_text("1–50 of 54 (filtered from 294)")

    # A prefix: the exact ref first, then the longer ones; MRN-120 (a substring) and MRN-210 are not found.
    page.get_by_test_id("queue-search").fill("MRN-20")
    expect(page.get_by_test_id("queue-range")).to_have_text("1–50 of 74 (filtered from 294)")
    expect(groups.first).to_contain_text("MRN-20")
    expect(groups.first).to_contain_text("10 requests")
    patients = set(page.eval_on_selector_all('[data-testid="queue-patient"]', "els => els.map(e => e.textContent)"))
    assert patients <= {"MRN-20", "MRN-200", "MRN-20417"}

    page.get_by_test_id("queue-search").fill("")
    page.get_by_test_id("filter-ward").select_option("Ward 4")
    expect(page.get_by_test_id("queue-range")).to_have_text("1–50 of 54 (filtered from 294)")
    page.get_by_test_id("filter-risk").select_option("high")
    expect(page.get_by_test_id("queue-range")).to_have_text("1–18 of 18 (filtered from 294)")
