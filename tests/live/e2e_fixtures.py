"""Fixtures for the end-to-end browser tests on a real daphne: a browser per test and the signed-out page.

A test module takes them by importing them (`page` comes from tests/live/conftest.py):

    from tests.live.e2e_fixtures import browser_page, chromium  # noqa: F401 - pytest fixtures
"""

from contextlib import contextmanager

import pytest
from django.db import connections
from playwright.sync_api import sync_playwright

from tests.helpers.waits import HANG_MS
from tests.live.browser import launch_chromium
from tests.live.e2e_helpers import InboxPage


@pytest.fixture
def chromium(transactional_db):
    """Debian's Chromium for one test, started after its database setup and closed before its flush.

    Overrides the module-wide browser of inbox_fixtures.py that `page` asks for.
    While Playwright's sync API runs, its event loop counts as running on this
    thread, and Django then (1) refuses ORM calls and (2) keeps this thread's
    connections in a context variable: a second connection, without the
    serialized data that restores the migrations' groups after the flush. So the
    browser lives strictly inside the test's database lifetime; ORM calls made
    meanwhile (personas, force_login) are allowed (the loop only drives the
    browser, never that connection) and their connection is closed before the
    loop stops, so nothing holds the test database open.
    """
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = launch_chromium(playwright)
        yield browser
        browser.close()
        connections.close_all()


@pytest.fixture
def browser_page(page, daphne_server):
    """The page on the live server; afterwards, no script error and nothing the CSP refused."""
    inbox = InboxPage(page, daphne_server)
    yield inbox
    assert inbox.page_errors == [], f"JavaScript errors on the page: {inbox.page_errors}"
    assert inbox.csp_violations == [], f"Content-Security-Policy violations: {inbox.csp_violations}"


@contextmanager
def signed_in(chromium, server, username: str, **context_options):
    """Another person's inbox: a browser context of its own (own cookies), signed in, live.

    For tests with two reviewers at once, or a phone beside the desktop page.
    """
    context = chromium.new_context(**{"viewport": {"width": 1280, "height": 900}, **context_options})
    context.set_default_timeout(HANG_MS)
    try:
        inbox = InboxPage(context.new_page(), server)
        inbox.sign_in(username)
        inbox.wait_live()
        yield inbox
        assert inbox.page_errors == [], f"JavaScript errors on {username}'s page: {inbox.page_errors}"
        assert inbox.csp_violations == [], f"Content-Security-Policy violations: {inbox.csp_violations}"
    finally:
        context.close()
