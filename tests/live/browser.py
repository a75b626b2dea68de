"""Debian's Chromium for the browser tests, and where a failing test leaves its screenshot."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.waits import HANG_MS

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO / "test-artifacts"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


def launch_chromium(playwright, **kwargs):
    """Debian's Chromium; never a Playwright-downloaded browser.

    Also sets `expect`'s wait, which is Playwright's own (5 s) and not the context's.
    """
    from playwright.sync_api import expect

    expect.set_options(timeout=HANG_MS)
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, **kwargs)
