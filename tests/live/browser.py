"""Debian's Chromium for the browser tests, and where a failing test leaves its screenshot."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO / "test-artifacts"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


def launch_chromium(playwright, **kwargs):
    """Debian's Chromium; never a Playwright-downloaded browser."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, **kwargs)

