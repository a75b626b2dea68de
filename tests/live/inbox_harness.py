"""Drive the reviewer inbox in real Chromium with its backends played by Playwright.

The page is the production template (templates/inbox/inbox.html, extending base.html)
rendered by a standalone Django template engine, so no server or database is needed.
Playwright serves it and static/ from a fake origin, plays the server side of the inbox
websocket and answers the decision, stop, approval and card-list endpoints. What it
sends is built by the server's own code over in-memory rows (tests/live/inbox_rows.py):
the cards, the socket's messages, the answers and the error bodies.

    harness = InboxHarness(page)
    harness.open([approval_card(tier="high"), clarification_card()])
    harness.card(card_id).get_by_test_id("approve").click()
    harness.wait_for_decisions(1)

Run by hand to get a screenshot of a realistic inbox:

    .venv/bin/python -m tests.live.inbox_harness test-artifacts/inbox.png
"""

from __future__ import annotations

import json
import mimetypes
import os
import re
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

if __name__ == "__main__":  # pragma: no cover - run by hand: the project's settings, as under pytest
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
    django.setup()

from approvals.consumers import COUNTED_PUSHES
from approvals.models import ApprovalStatus
from condor.errors import ApprovalNotPending, CondorError, NotFound
from tests.helpers.waits import HANG_MS, HANG_SECONDS
from tests.live.inbox_rows import (
    Card,
    Rows,
    approval_body,
    approval_card,
    card_page,
    clarification_card,
    error_response,
    stopped_run_body,
    unrouted_response,
)

REPO = Path(__file__).resolve().parents[2]
TEMPLATES_DIR = REPO / "templates"
STATIC_DIR = REPO / "static"
ARTIFACTS_DIR = REPO / "test-artifacts"

ORIGIN = "http://inbox.condor.test"
INBOX_PATH = "/inbox/"
LOGIN_PATH = "/accounts/login/"
WS_PATH = "/ws/inbox/"
DECISION_URL_TEMPLATE = "/api/v1/approvals/{id}/decision/"
STOP_URL_TEMPLATE = "/api/v1/runs/{id}/stop/"
APPROVAL_URL_TEMPLATE = "/api/v1/approvals/{id}/"
CARDS_URL = "/api/v1/inbox/cards/"
CSRF_TOKEN = "harnessCsrfToken0123456789abcdefABCDEF0123456789abcdefABCD"

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

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


def launch_chromium(playwright, **kwargs):
    """Debian's Chromium; never a Playwright-downloaded browser.

    Also sets `expect`'s wait, which is Playwright's own (5 s) and not the context's.
    """
    from playwright.sync_api import expect

    expect.set_options(timeout=HANG_MS)
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, **kwargs)


# --------------------------------------------------------------------------- templates


def _template_engine():
    from django.template import Engine

    # Same loaders and tag libraries the project's DjangoTemplates backend gives these templates.
    return Engine(dirs=[str(TEMPLATES_DIR)], debug=True, libraries={"static": "django.templatetags.static"})


def render_template(name: str, context: dict[str, Any]) -> str:
    """Render one of our templates with plain static URLs (/static/<path>)."""
    from django.conf import settings
    from django.template import Context
    from django.test.utils import override_settings

    engine = _template_engine()
    ctx = {"csrf_token": CSRF_TOKEN, **context}
    # Under the project's real settings the staticfiles storage may want a manifest;
    # the harness serves static/ directly, so plain URLs are what it needs.
    storages = {**getattr(settings, "STORAGES", {})}
    storages["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    with override_settings(STATIC_URL="/static/", STORAGES=storages):
        return engine.get_template(name).render(Context(ctx, autoescape=True))


@dataclass
class FakeUser:
    """Just enough of request.user for the templates."""

    username: str = "rita"
    is_authenticated: bool = True

    def get_username(self) -> str:
        return self.username


def render_inbox(username: str = "rita", poll_seconds: int = 10) -> str:
    return render_template(
        "inbox/inbox.html",
        {"ws_path": WS_PATH, "decision_url_template": DECISION_URL_TEMPLATE, "stop_url_template": STOP_URL_TEMPLATE,
         "user": FakeUser(username), "approval_url_template": APPROVAL_URL_TEMPLATE, "cards_url": CARDS_URL,
         "poll_seconds": poll_seconds},
    )


# --------------------------------------------------------------------------- harness


@dataclass
class Reply:
    """The next answer to one request: an error the server raises, or a dropped connection."""

    error: Exception | None = None
    network_error: bool = False
    before: Callable[[], None] | None = None  # runs while the request is in flight


@dataclass
class Decision:
    approval_id: str
    body: Any
    headers: dict[str, str]


@dataclass
class InboxHarness:
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
    polls: int = 0
    frames_sent: int = 0  # to the page's sockets since it was (re)loaded
    # The layout the page opens in (static/inbox/settings.js): "full" shows every card, as the
    # card tests expect; "queue" is the compact queue with a detail pane (the page's default).
    view: str = "full"

    def __post_init__(self) -> None:
        if self.view:
            self.page.add_init_script(f"try {{ localStorage.setItem('condor.inbox.view', {json.dumps(self.view)}); }} catch (e) {{}}")
        pattern = re.escape(DECISION_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._decision_re = re.compile(f"^{pattern}$")
        stop_pattern = re.escape(STOP_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._stop_re = re.compile(f"^{stop_pattern}$")
        approval_pattern = re.escape(APPROVAL_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._approval_re = re.compile(f"^{approval_pattern}$")
        self.page.context.add_cookies([{"name": "csrftoken", "value": CSRF_TOKEN, "url": ORIGIN}])
        self.page.on("pageerror", lambda err: self.page_errors.append(str(err)))
        self.page.route(f"{ORIGIN}/**", self._serve)
        self.page.route_web_socket(f"ws://{urlsplit(ORIGIN).netloc}{WS_PATH}", self._on_socket)
        self.page.add_init_script(FRAME_COUNTER)  # after the routing, whose WebSocket it extends

    # ---- page

    def open(self, cards: list[Card] = (), *, wait_live: bool = True) -> None:
        """Load the page with `cards` as the server's rows (a reload keeps rows already held)."""
        for card in cards:
            self.keep(card)
        self.frames_sent = 0
        self.page.goto(f"{ORIGIN}{INBOX_PATH}")
        if wait_live:
            self.page.locator('[data-testid="connection-state"][data-state="live"]').wait_for()

    def card(self, approval_id: str):
        return self.page.locator(f'[data-testid="approval-card"][data-approval-id="{approval_id}"]')

    def cards(self):
        return self.page.locator('[data-testid="approval-card"]')

    def displayed_ids(self) -> list[str]:
        return self.page.eval_on_selector_all('[data-testid="approval-card"]', "els => els.map(e => e.dataset.approvalId)")

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
            # approvals/consumers.py answers the page's keep-alive and its page requests.
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

    def remove(self, approval_id: str, status: str = ApprovalStatus.APPROVED, decided_by: str | None = "alice",
               *, reason: str = "Decided elsewhere.") -> None:
        """Decide (or expire, or consume) the row elsewhere and push its removal."""
        self.rows.decide(approval_id, status, decided_by, reason=reason)
        self._push(self.rows.removed(approval_id))

    def drop_connection(self, code: int = 1012, reason: str = "server restart") -> None:
        ws = self.socket
        assert ws is not None, "no open connection to drop"
        self._open.discard(id(ws))
        ws.close(code=code, reason=reason)

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

    # ---- decision API

    def refuse_next(self, approval_id: str, error: Exception) -> None:
        """The next decision POST for this approval raises `error` (a condor.errors or DRF exception) on the server."""
        self.replies.setdefault(approval_id, []).append(Reply(error=error))

    def during_next(self, approval_id: str, before: Callable[[], None]) -> None:
        """Run `before` while the next decision POST for this approval is in flight, then answer it."""
        self.replies.setdefault(approval_id, []).append(Reply(before=before))

    def fail_network_next(self, approval_id: str) -> None:
        self.replies.setdefault(approval_id, []).append(Reply(network_error=True))

    def wait_for_decisions(self, count: int = 1, timeout: float = HANG_SECONDS) -> list[Decision]:
        self._wait(lambda: len(self.decisions) >= count, timeout, f"{count} decision request(s)")
        return self.decisions

    def _decide(self, route, approval_id: str) -> None:
        request = route.request
        try:
            body = json.loads(request.post_data or "null")
        except ValueError:
            body = request.post_data
        self.decisions.append(Decision(approval_id, body, dict(request.headers)))
        queued = self.replies.get(approval_id)
        reply = queued.pop(0) if queued else Reply()
        if reply.before is not None:
            reply.before()
        if reply.network_error:
            route.abort("connectionreset")
            return
        row = self.rows.by_id.get(approval_id)
        error = reply.error or (NotFound() if row is None else None) or \
            (ApprovalNotPending() if row.status != ApprovalStatus.PENDING else None)
        if error is not None:
            self._fulfil(route, *error_response(error))
            return
        body = body if isinstance(body, dict) else {}
        approved = body.get("approved", True) is not False
        status = ApprovalStatus.APPROVED if approved else ApprovalStatus.REJECTED
        try:
            met = self.rows.decide(approval_id, status, self.username, reason=body.get("reason") or "",
                                   edited_args=body.get("edited_args"), values=body.get("values"))
        except CondorError as refused:
            self._fulfil(route, *error_response(refused))
            return
        # The decision's push (on commit): the card goes, or stays with one more approval counted.
        self._push(self.rows.removed(approval_id) if met else self.rows.updated(approval_id))
        self._fulfil(route, 200, approval_body(row))

    def wait_for_stops(self, count: int = 1, timeout: float = HANG_SECONDS) -> list[Decision]:
        self._wait(lambda: len(self.stops) >= count, timeout, f"{count} stop request(s)")
        return self.stops

    def _stop(self, route, run_id: str) -> None:
        request = route.request
        self.stops.append(Decision(run_id, json.loads(request.post_data or "null"), dict(request.headers)))
        reply = self.stop_replies.pop(0) if self.stop_replies else Reply()
        if reply.error is not None:
            self._fulfil(route, *error_response(reply.error))
            return
        held = [row for row in self.rows.by_id.values() if str(row.run_id) == run_id]
        if not held:
            self._fulfil(route, *error_response(NotFound()))
            return
        self._fulfil(route, 200, stopped_run_body(held[0]))

    # ---- HTTP

    @staticmethod
    def _fulfil(route, status: int, body: Any) -> None:
        route.fulfill(status=status, content_type="application/json", body=json.dumps(body))

    def _serve(self, route) -> None:
        # An exception in a route handler would only surface as a 30 s navigation timeout.
        try:
            self._serve_inner(route)
        except Exception as exc:  # noqa: BLE001 - reported to the test instead
            self.server_errors.append(repr(exc))
            route.fulfill(status=500, content_type="text/plain", body=f"harness error: {exc!r}")

    def _serve_inner(self, route) -> None:
        request = route.request
        path = urlsplit(request.url).path
        self.requests.append(f"{request.method} {path}")
        if path == INBOX_PATH:
            route.fulfill(status=200, content_type="text/html; charset=utf-8",
                          body=render_inbox(self.username, self.poll_seconds))
            return
        if path == CARDS_URL and request.method == "GET" and self.cards_served:
            self.polls += 1
            if self.cards_refusal is not None:
                self._fulfil(route, *error_response(self.cards_refusal))
            else:
                self._fulfil(route, 200, card_page(self.rows, request.url))
            return
        if path.startswith("/static/"):
            target = (STATIC_DIR / path[len("/static/"):]).resolve()
            if STATIC_DIR.resolve() in target.parents and target.is_file():
                ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                route.fulfill(status=200, content_type=ctype, body=target.read_bytes())
                return
        match = self._decision_re.match(path)
        if match and request.method == "POST":
            self._decide(route, match.group("id"))
            return
        stop = self._stop_re.match(path)
        if stop and request.method == "POST":
            self._stop(route, stop.group("id"))
            return
        approval = self._approval_re.match(path)
        if approval and request.method == "GET":
            row = self.rows.by_id.get(approval.group("id"))
            self._fulfil(route, *((200, approval_body(row)) if row is not None else error_response(NotFound())))
            return
        if path == "/accounts/logout/" and request.method == "POST":
            self.logouts.append(request.post_data or "")
            route.fulfill(status=200, content_type="text/plain", body="signed out")
            return
        unrouted = unrouted_response(path)
        route.fulfill(status=unrouted.status_code, content_type=unrouted["Content-Type"], body=unrouted.content)

    def _wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        # Route and websocket handlers only run while Playwright is waiting, so poll through it.
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self.page.wait_for_timeout(20)


def demo_cards() -> list[Card]:
    """Six varied cards for screenshots and manual review."""
    return [
        approval_card(
            tier="high", expires_in=45, tool="ehr.medication_order", op="create", patient_ref="MRN-20417",
            title="Sepsis pathway — bay 3", client="sepsis-agent", care_unit="ICU", tainted_by="web_search",
            rationale="eGFR fell from 61 to 48 overnight; the renal protocol asks for a once-daily dose by weight.",
            args={"drug": "gentamicin", "dose_mg_per_kg": 5, "route": "IV", "frequency": "once daily",
                  "weight_kg": 72.4, "renal_function": {"egfr": 48, "measured": "2030-01-14"}},
        ),
        approval_card(
            tier="low", expires_in=540, tool="ehr.allergy_record", op="delete", patient_ref="MRN-33108",
            title="Medicines reconciliation", client="pharmacy-agent",
            args={"allergy_id": "AL-99812", "substance": "penicillin", "reason": "Recorded in error — tolerated amoxicillin 2029"},
        ),
        clarification_card(
            patient_ref="MRN-11873", title="Heart failure follow-up", client="clinic-scheduler",
            message="Which clinic and date should the follow-up be booked for?", expires_in=1500,
        ),
        approval_card(
            policy_class="comms", tier=None, expires_in=880, tool="send_email", op="send", patient_ref="MRN-11873",
            title="Heart failure follow-up", client="clinic-scheduler",
            args={"to": "reception@clinic.example", "template": "discharge_summary_v3", "attachments": ["summary.pdf"]},
        ),
        approval_card(
            tier="low", expires_in=3900, tool="lab.order_panel", op="create", patient_ref="MRN-50221",
            title="Diabetes annual review", client="primary-care-agent",
            args={"panel": "HbA1c", "priority": "routine", "collect_by": "2030-02-01"},
        ),
        approval_card(
            tier=None, expires_in=1200, tool="notes.append", op="update", patient_ref="MRN-50221",
            title="Diabetes annual review", client="primary-care-agent", tainted_by="parse_uploaded_document",
            args={"note_id": "N-4471", "text": "Patient reports <b>no</b> hypos since last review."},
        ),
    ]


def save_demo_screenshot(path: str | Path, *, width: int = 1240, height: int = 1900, setup: Callable | None = None) -> Path:
    from playwright.sync_api import sync_playwright

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            harness = InboxHarness(page)
            cards = demo_cards()
            harness.open(cards)
            if setup is not None:
                setup(harness, cards)
            harness.frames_taken()
            page.screenshot(path=str(path), full_page=True)
        finally:
            browser.close()
    return path


if __name__ == "__main__":  # pragma: no cover - manual tool
    print(save_demo_screenshot(sys.argv[1] if len(sys.argv) > 1 else ARTIFACTS_DIR / "inbox.png"))
