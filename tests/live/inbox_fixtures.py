"""Fixtures for the inbox browser tests: Debian's Chromium, a page that keeps a screenshot
when its test fails, and the mocked inbox (tests/live/inbox_harness.py) on that page.

tests/live/conftest.py offers them to every module in tests/live. `chromium` is
module-scoped, so each module that uses it starts one browser; a module may define its
own `chromium` instead (test_inbox_e2e.py does, to fit the browser inside its database
lifetime) and still take `page`.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import sync_playwright

from tests.helpers.waits import HANG_MS
from tests.live.browser import ARTIFACTS_DIR, launch_chromium
from tests.live.inbox_harness import InboxHarness


@pytest.fixture(scope="module")
def chromium():
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, request):
    # Not UTC, so date-time bounds and answers prove they carry the right offset.
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Europe/Paris")
    context.set_default_timeout(HANG_MS)
    page = context.new_page()
    failures_before = request.session.testsfailed
    yield page
    # The call phase has been reported by now: keep a picture of what the reviewer saw.
    if request.session.testsfailed > failures_before:
        ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        try:
            page.screenshot(path=str(ARTIFACTS_DIR / f"{name}.png"), full_page=True)
        except Exception:  # noqa: BLE001 - a failed screenshot must not hide the failure
            pass
    context.close()


@pytest.fixture
def inbox(page):
    harness = InboxHarness(page)
    yield harness
    assert harness.page_errors == [], f"JavaScript errors on the page: {harness.page_errors}"
    assert harness.server_errors == [], f"harness errors: {harness.server_errors}"
