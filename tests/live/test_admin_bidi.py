"""The admin's approval page draws a value's digits in the order they were sent (SPEC section 4), in real
Chromium on a real daphne, signed in as carl (compliance) through the admin's own login form."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.helpers.approval_loop import suspend
from tests.helpers.runs import open_executing_run
from tests.live.bidi import TATWEEL_DOSE, assert_drawn_in_sent_order
from tests.live.browser import CHROMIUM
from tests.live.e2e_fixtures import browser_page, chromium  # noqa: F401 - a browser per test, the live page
from tests.live.test_admin_a11y import compliance  # noqa: F401 - carl, signed in to the admin

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_the_approval_page_draws_the_digits_between_tatweels_in_order(compliance, live_agent):
    run_id = open_executing_run(live_agent, title="Bed 4", patient_ref="MRN-61234")
    approval = suspend(live_agent, run_id, args={"drug": "methotrexate", "dose_mg_per_week": TATWEEL_DOSE})
    page = compliance.page
    page.goto(compliance.server.url(f"/admin/approvals/approval/{approval['id']}/change/"))
    args = page.locator(".field-args_pretty pre.condor-json")
    expect(args).to_contain_text("2.5 / 25")
    assert_drawn_in_sent_order(args, "2525")
    expect(page.get_by_text("right-to-left letters among digits or other text")).to_be_visible()
