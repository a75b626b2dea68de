"""The reviewer's side of the end-to-end inbox tests: a real sign-in and the live page.

`InboxPage` wraps a Playwright page pointed at a real daphne (tests/live/server.py):
it signs in through /accounts/login/, waits for the inbox socket to go live and
records what would show a reload or a broken page (every websocket opened, every
uncaught script error, everything the Content-Security-Policy refused).
"""

from __future__ import annotations

PASSWORD = "correct horse battery"  # the conftest personas' password
LOGIN_PATH = "/accounts/login/"
INBOX_PATH = "/inbox/"


class InboxPage:
    def __init__(self, page, server):
        self.page, self.server = page, server
        self.sockets: list[str] = []
        self.page_errors: list[str] = []
        # Chromium reports what the Content-Security-Policy refused as a console error.
        self.csp_violations: list[str] = []
        page.on("websocket", lambda ws: self.sockets.append(ws.url))
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.on("console", lambda message: self._hear_console(message))

    def _hear_console(self, message) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            self.csp_violations.append(message.text)

    def sign_in(self, username: str, password: str = PASSWORD):
        """Submit the login form as a person would; returns the response the redirects end on."""
        self.page.goto(self.server.url(LOGIN_PATH))
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        with self.page.expect_navigation() as landed:
            self.page.get_by_role("button", name="Sign in").click()
        return landed.value

    def wait_live(self) -> None:
        self.page.locator('[data-testid="connection-state"][data-state="live"]').wait_for()

    def mark_document(self) -> None:
        """Tag this document; `same_document()` is false after any reload or navigation."""
        self.page.evaluate("window.__sameDocument = true")

    def same_document(self) -> bool:
        return self.page.evaluate("window.__sameDocument === true")

    def card(self, approval_id: str):
        return self.page.locator(f'[data-testid="approval-card"][data-approval-id="{approval_id}"]')

    def open_card(self, approval_id: str):
        """The full card, opened from its line in the queue (the page's default layout) as a reviewer would."""
        self.page.locator(f'[data-testid="queue-row"][data-approval-id="{approval_id}"]').click()
        return self.card(approval_id)

    @property
    def feedback(self):
        return self.page.get_by_test_id("inbox-feedback")

    @property
    def path(self) -> str:
        return self.page.url.removeprefix(self.server.url())
