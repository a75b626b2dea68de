"""The Content-Security-Policy in real Chromium (issue 9, item 9): the inbox and the admin work under it.

Chromium reports every blocked script, style, connection or frame as a console
error ("Refused to … because it violates the following Content Security Policy
directive"); `browser_page` (tests/live/e2e_fixtures.py) fails any test whose
page reported one, these and every other end-to-end test. The first test proves
the listener hears a violation when there is one.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.helpers.approval_loop import PRESCRIPTION, suspend
from tests.helpers.runs import open_executing_run
from tests.live.browser import CHROMIUM
from tests.live.e2e_fixtures import browser_page, chromium  # noqa: F401 - a browser per test, the live page
from tests.live.e2e_helpers import PASSWORD

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def open_page(browser_page, path: str):
    response = browser_page.page.goto(browser_page.server.url(path))
    assert "script-src 'self'" in response.headers["content-security-policy"]
    return response


def test_an_inline_script_and_style_are_refused_and_heard(browser_page):
    open_page(browser_page, "/accounts/login/")
    browser_page.page.evaluate("""() => {
        const script = document.createElement("script");
        script.textContent = "window.__ranInline = true";
        document.body.append(script);
        document.body.setAttribute("style", "background: red");
    }""")
    expect(browser_page.page.locator("body")).to_be_visible()
    assert browser_page.page.evaluate("window.__ranInline === undefined")
    assert len(browser_page.csp_violations) >= 2, browser_page.csp_violations
    browser_page.csp_violations.clear()  # heard; the fixture's own check is for the pages below


def test_the_inbox_works_under_the_policy(browser_page, rita, live_agent):
    landed = browser_page.sign_in("rita")
    assert "content-security-policy" in landed.headers
    browser_page.wait_live()  # the /ws/inbox/ socket connected under connect-src
    approval = suspend(live_agent, open_executing_run(live_agent, title="Bed 2"), args=PRESCRIPTION)
    card = browser_page.open_card(approval["id"])  # from its line in the queue
    card.get_by_test_id("approve").click()
    card.get_by_test_id(
        "confirm-approve"
    ).click()  # a high-risk approval is confirmed; the decision is a fetch under connect-src
    expect(card).to_have_count(0)
    expect(browser_page.feedback).to_contain_text("Approved")


def test_the_admin_works_under_the_policy(browser_page, carl, live_agent):
    approval = suspend(live_agent, open_executing_run(live_agent, title="Bed 3"))
    open_page(browser_page, "/admin/login/")
    browser_page.page.get_by_label("Username").fill("carl")
    browser_page.page.get_by_label("Password").fill(PASSWORD)
    with browser_page.page.expect_navigation():
        browser_page.page.get_by_role("button", name="Log in").click()
    for path in (
        "/admin/",
        f"/admin/approvals/approval/{approval['id']}/change/",
        "/admin/audit/auditevent/?kind__exact=suspend",
        "/admin/approvals/approval/",
    ):
        assert open_page(browser_page, path).status == 200, path
    browser_page.page.get_by_role("link", name="prescribe_medication").first.wait_for()  # the changelist row
