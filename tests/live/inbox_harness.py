"""Drive the reviewer inbox in real Chromium with its backends played by Playwright.

The page is the production template (tests/live/inbox_page.py), served with static/
from a fake origin, so no server or database is needed. Playwright plays the server
side of the inbox websocket (here) and answers the decision, stop, approval and
card-list endpoints (tests/live/inbox_http.py). What it sends is built by the server's
own code over in-memory rows (tests/live/inbox_rows.py): the cards, the socket's
messages, the answers and the error bodies.

    harness = InboxHarness(page)
    harness.open([approval_card(tier="high"), clarification_card()])
    harness.card(card_id).get_by_test_id("approve").click()
    harness.wait_for_decisions(1)

A screenshot of a realistic inbox: tests/live/inbox_demo.py.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from approvals.models import ApprovalStatus
from core.errors import CondorError
from inbox.consumers import COUNTED_PUSHES
from tests.helpers.waits import HANG_SECONDS
from tests.live.inbox_http import Decision, InboxHttp, Reply
from tests.live.inbox_page import (
    APPROVAL_URL_TEMPLATE,
    CLAIM_URL_TEMPLATE,
    CSRF_TOKEN,
    DECISION_URL_TEMPLATE,
    INBOX_PATH,
    ORIGIN,
    STOP_URL_TEMPLATE,
    WS_PATH,
)
from tests.live.inbox_rows import Card, Rows

# Counts the inbox socket's messages as the page takes them: this listener is added before the
# page's own handler, and a wait that sees the count runs in a later task, after that handler.
FRAME_COUNTER = """
window.__inboxFramesTaken = 0;
window.WebSocket = class extends window.WebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', () => { window.__inboxFramesTaken += 1; });
  }
};
"""

# Keeps the page's newest inbox socket where a test can send on it (socket_round_trip).
SOCKET_HANDLE = """
window.WebSocket = class extends window.WebSocket {
  constructor(...args) {
    super(...args);
    window.__inboxSocket = this;
  }
};
"""

# Resolves once an IntersectionObserver made now sees the element on screen. Observers are
# told in the order they were made, so the page's own (older) one has been told by then.
SEEN_IN_VIEW = """
el => new Promise(resolve => {
  const watch = new IntersectionObserver(seen => {
    if (seen[seen.length - 1].isIntersecting) { watch.disconnect(); resolve(true); }
  });
  watch.observe(el);
})
"""


@dataclass
class InboxHarness(InboxHttp):
    """The page plus a scripted server: websocket frames in, decision requests out."""

    page: Any
    username: str = "rita"
    auto_snapshot: bool = True  # every (re)connect gets the first page of the pending set, like the server
    answer_pages: bool = True  # page requests are answered (False: recorded only, as over a stalled server)
    page_requests: list[Any] = field(default_factory=list)  # the cursor of each page request, in order
    # Tests of what the page does with every card loaded (filters, 500 cards in full) get the
    # whole pending set in the snapshot; the server pages it (inbox_pages; test_inbox_ui_paging.py).
    whole_snapshot: bool = False
    rows: Rows = field(default_factory=Rows)
    sockets: list[Any] = field(default_factory=list)
    received: list[Any] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # "METHOD path" of every request, in order
    decisions: list[Decision] = field(default_factory=list)
    logouts: list[str] = field(default_factory=list)
    stops: list[Decision] = field(default_factory=list)  # POST runs/{id}/stop/ (approval_id holds the run id)
    stop_replies: list[Reply] = field(default_factory=list)
    replies: dict[str, list[Reply]] = field(default_factory=dict)
    page_errors: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    _open: set[int] = field(default_factory=set)
    # The Redis-down fallback: the socket refused at once, the REST snapshot polled instead.
    socket_down: bool = False
    cards_served: bool = False  # GET inbox/cards/ answered (else 404, as if the page never asked)
    cards_refusal: Exception | None = None  # ...or refused with this error
    poll_seconds: int = 10
    quick_reasons: tuple[str, ...] = ()  # governance's quick rejection reasons, as the page is given them
    polls: int = 0  # GET inbox/cards/ requests: a poll's pages and the pages asked for while polling
    polled_cursors: list[Any] = field(default_factory=list)  # the `cursor` of each (None: the first page)
    searches: list[dict] = field(default_factory=list)  # the query of each search the queue asked the server
    frames_sent: int = 0  # to the page's sockets since it was (re)loaded
    # The layout the page opens in (inbox/static/inbox/settings.js): "full" shows every card, as the
    # card tests expect; "queue" is the compact queue with a detail pane (the page's default).
    view: str = "full"

    def __post_init__(self) -> None:
        if self.view:
            self.page.add_init_script(
                f"try {{ localStorage.setItem('condor.inbox.view', {json.dumps(self.view)}); }} catch (e) {{}}"
            )
        pattern = re.escape(DECISION_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._decision_re = re.compile(f"^{pattern}$")
        stop_pattern = re.escape(STOP_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._stop_re = re.compile(f"^{stop_pattern}$")
        approval_pattern = re.escape(APPROVAL_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._approval_re = re.compile(f"^{approval_pattern}$")
        claim_pattern = re.escape(CLAIM_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._claim_re = re.compile(f"^{claim_pattern}$")
        self.page.context.add_cookies([{"name": "csrftoken", "value": CSRF_TOKEN, "url": ORIGIN}])
        self.page.on("pageerror", lambda err: self.page_errors.append(str(err)))
        self.page.route(f"{ORIGIN}/**", self._serve)
        self.page.route_web_socket(f"ws://{urlsplit(ORIGIN).netloc}{WS_PATH}", self._on_socket)
        self.page.add_init_script(FRAME_COUNTER)  # after the routing, whose WebSocket it extends
        self.page.add_init_script(SOCKET_HANDLE)

    # ---- page

    def open(self, cards: list[Card] = (), *, wait_live: bool = True) -> None:
        """Load the page with `cards` as the server's rows (a reload keeps rows already held)."""
        for card in cards:
            self.keep(card)
        self.frames_sent = 0
        self.page.goto(f"{ORIGIN}{INBOX_PATH}")
        if wait_live:
            self.page.locator('[data-testid="connection-state"][data-state="live"]').wait_for()
            # "live" is set as the snapshot arrives; its cards are drawn on the next animation
            # frame (inbox/static/inbox/queue.js). A key pressed before that finds no card to act on.
            self.page.evaluate("() => new Promise(drawn => requestAnimationFrame(() => requestAnimationFrame(drawn)))")

    def open_with_clock_stopped(self, cards: list[Card] = ()) -> datetime:
        """`open`, then stop the page's clock an hour ahead (past however slow the load was): the instant it stands at.

        From here the page's timers (the 1 s tick, polls, reconnects, animation frames) run
        only as `page.clock.run_for` moves the clock; cards parked `now=` that instant have
        one right countdown.
        """
        start = datetime.now(UTC)
        self.page.clock.install(time=start)
        self.open(cards)
        frozen = start + timedelta(hours=1)
        self.page.clock.pause_at(frozen)
        return frozen

    def open_one(self, card: Card):
        """Load the page with `card` as the server's one row; its card on the page."""
        self.open([card])
        return self.card(card["id"])

    def card(self, approval_id: str):
        return self.page.locator(f'[data-testid="approval-card"][data-approval-id="{approval_id}"]')

    def cards(self):
        return self.page.locator('[data-testid="approval-card"]')

    def displayed_ids(self) -> list[str]:
        return self.page.eval_on_selector_all(
            '[data-testid="approval-card"]', "els => els.map(e => e.dataset.approvalId)"
        )

    @property
    def feedback(self):
        return self.page.get_by_test_id("inbox-feedback")

    @property
    def connection(self):
        return self.page.get_by_test_id("connection-state")

    # ---- websocket (server side)

    def _on_socket(self, ws) -> None:
        self.sockets.append(ws)
        if self.socket_down:
            ws.close(code=1011, reason="channel layer unavailable")
            return
        self._open.add(id(ws))

        def on_message(message):
            try:
                content = json.loads(message)
            except (TypeError, ValueError):
                content = message
            self.received.append(content)
            # inbox/consumers.py answers the page's keep-alive and its page requests.
            if content == {"type": "ping"}:
                self._send_on(ws, {"type": "pong"})
            elif isinstance(content, dict) and content.get("type") == "page":
                self.page_requests.append(content.get("cursor"))
                if self.answer_pages:
                    self._send_on(ws, self.page_frame(content.get("cursor")))

        def on_close(code, reason):
            self._open.discard(id(ws))

        ws.on_message(on_message)
        ws.on_close(on_close)
        if self.auto_snapshot:
            self._send_on(ws, {"type": "snapshot", **self.rows.page(whole=self.whole_snapshot)})

    def page_frame(self, cursor) -> dict:
        """The consumer's answer to a page request: the page after `cursor`, or its error frame."""
        try:
            return {"type": "page", "after": cursor, **self.rows.page(cursor)}
        except CondorError as exc:
            return {"type": "error", "error": exc.code, "detail": str(exc.detail)}

    @property
    def socket(self):
        live = [ws for ws in self.sockets if id(ws) in self._open]
        return live[-1] if live else None

    def send(self, frame: dict) -> None:
        """Send a frame the server built to the page on the current connection."""
        ws = self.socket
        if ws is None:
            raise AssertionError("the page has no open inbox websocket")
        self._send_on(ws, frame)

    def _send_on(self, ws, frame: dict) -> None:
        self.frames_sent += 1
        ws.send(json.dumps(frame))

    def frames_taken(self) -> None:
        """Wait until the page has handled every frame sent to it: what they change is on the page now."""
        self.page.wait_for_function("n => window.__inboxFramesTaken >= n", arg=self.frames_sent)

    def _push(self, message: dict) -> None:
        # With the socket down the change waits for the next poll, as on the server.
        if self.socket is not None:
            if message.get("type") in COUNTED_PUSHES:
                message = {**message, "total": self.rows.total()}
            self.send(message)

    def keep(self, card: Card) -> None:
        """The server holds `card`'s row from now on, unannounced (as while the page is away)."""
        self.rows.keep(card.row, card.context)

    def add(self, card: Card) -> None:
        self.keep(card)
        self._push(self.rows.added(card["id"]))

    def update(self, approval_id: str) -> None:
        """Push the row as it is now (after a claim, a counted approval, an escalation...)."""
        self._push(self.rows.updated(approval_id))

    def remove(
        self,
        approval_id: str,
        status: str = ApprovalStatus.APPROVED,
        decided_by: str | None = "alice",
        *,
        reason: str = "Decided elsewhere.",
    ) -> None:
        """Decide (or expire, or consume) the row elsewhere and push its removal."""
        self.rows.decide(approval_id, status, decided_by, reason=reason)
        self._push(self.rows.removed(approval_id))

    def withdraw(self, approval_id: str, cause: str = "superseded", stopped_by: str | None = None) -> None:
        """Withdraw the row as its run ends (approvals/expiry.py) and push its removal, saying why."""
        self.rows.decide(approval_id, ApprovalStatus.WITHDRAWN, None)
        self._push(self.rows.withdrawn(approval_id, cause, stopped_by))

    def drop_connection(self, code: int = 1012, reason: str = "server restart") -> None:
        ws = self.socket
        assert ws is not None, "no open connection to drop"
        self._open.discard(id(ws))
        ws.close(code=code, reason=reason)

    def wait_for_polls(self, count: int, timeout: float = 15.0) -> None:
        """Until GET inbox/cards/ has been asked `count` times since the harness started."""
        self._wait(lambda: self.polls >= count, timeout, f"{count} card list requests")

    def wait_for_connections(self, count: int, timeout: float = HANG_SECONDS) -> None:
        self._wait(lambda: len(self.sockets) >= count, timeout, f"{count} websocket connections")

    def round_trip(self) -> None:
        """A request from the page, answered: every request the page made before it has reached the harness.

        Requests reach the harness in the order the page made them, so a check that
        the page sent nothing (no decision, no stop) ends with this marker, not a pause.
        """
        marker = f"/__round-trip/{len(self.requests)}"
        self.page.evaluate("url => fetch(url).then(r => r.text())", marker)
        assert f"GET {marker}" in self.requests

    def socket_round_trip(self) -> None:
        """A ping from the page on its inbox socket, received: every message the page sent before it is here.

        Messages reach the harness in the order the page sent them, so a check that the
        page asked nothing over the socket (no page request) ends with this marker, not a pause.
        """
        marker = {"type": "ping", "round_trip": len(self.received)}
        self.page.evaluate("m => window.__inboxSocket.send(JSON.stringify(m))", marker)
        self._wait(lambda: marker in self.received, HANG_SECONDS, "the page's ping")

    def seen_in_view(self, locator) -> None:
        """Until `locator` is on screen as the page's IntersectionObservers see it: they have been told."""
        locator.evaluate(SEEN_IN_VIEW)

    def pass_page_time(self, ms: int) -> None:
        """Run the page's timers through `ms` of its time at once, then stop its clock; what they sent has arrived.

        Needs `page.clock.install()` before `open`. The page's clock is paused `ms` ahead
        (firing what falls due on the way) and run `ms` further, so a poll or reconnect
        the page should not make has had every chance, with no wall-clock wait.
        """
        ahead = self.page.evaluate("Date.now()") / 1000 + ms / 1000
        self.page.clock.pause_at(datetime.fromtimestamp(ahead, UTC))
        self.page.clock.run_for(ms)
        self.round_trip()

    def _wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        # Route and websocket handlers only run while Playwright is waiting, so poll through it.
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self.page.wait_for_timeout(20)
