"""Drive the reviewer inbox in real Chromium with its backends played by Playwright.

The page is the production template (templates/inbox/inbox.html, extending base.html)
rendered by a standalone Django template engine, so no project settings, database or
server are needed. Playwright serves it and static/ from a fake origin, plays the
server side of the inbox websocket and answers the decision endpoint.

    harness = InboxHarness(page)
    harness.open([approval_card(tier="high"), clarification_card()])
    harness.card(card_id).get_by_test_id("approve").click()
    harness.wait_for_decisions(1)

Run by hand to get a screenshot of a realistic inbox:

    .venv/bin/python -m tests.live.inbox_harness test-artifacts/inbox.png
"""

from __future__ import annotations

import itertools
import json
import mimetypes
import re
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

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

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


def launch_chromium(playwright, **kwargs):
    """Debian's Chromium; never a Playwright-downloaded browser."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, **kwargs)


# --------------------------------------------------------------------------- templates


def _template_engine():
    import django
    from django.apps import apps
    from django.conf import settings
    from django.template import Engine

    if not settings.configured:
        settings.configure(
            DEBUG=False,
            USE_TZ=True,
            STATIC_URL="/static/",
            INSTALLED_APPS=[],
            TEMPLATES=[],
        )
    if not apps.ready:
        django.setup()
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


# --------------------------------------------------------------------------- cards

_seq = itertools.count(1)


def iso(dt: datetime) -> str:
    """Like approvals/cards.py: datetime.isoformat(), microseconds and +00:00."""
    return dt.astimezone(UTC).isoformat()


def approval_card(
    *,
    tier: str | None = "low",
    expires_in: float = 600,
    tool: str = "ehr.medication_order",
    op: str = "create",
    args: dict | None = None,
    patient_ref: str | None = None,
    title: str = "Ward 7 discharge planning",
    client: str = "discharge-agent",
    rule_id: str = "tier.high.mutate",
    explanation: str = "Mutating call on a high-tier tool needs a human.",
    **extra: Any,
) -> dict[str, Any]:
    """A pending approval card as the inbox websocket sends it."""
    n = next(_seq)
    now = datetime.now(UTC)
    card = {
        "id": str(uuid.uuid4()),
        "run_id": str(uuid.uuid4()),
        "session": {"id": str(uuid.uuid4()), "title": title, "patient_ref": patient_ref or f"MRN-{40000 + n}"},
        "client": {"name": client},
        "tool": tool,
        "op": op,
        "tool_call_id": f"call_{n:04d}",
        "reason_code": "approval",
        "rule_id": rule_id,
        "explanation": explanation,
        "hitl_tier": tier,
        "args": args if args is not None else {"drug": "amoxicillin", "dose_mg": 500, "route": "oral", "frequency": "8-hourly"},
        "message": None,
        "resume_schema": {
            "type": "object",
            "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
            "required": ["approved"],
        },
        "requested_at": iso(now - timedelta(seconds=30)),
        "expires_at": iso(now + timedelta(seconds=expires_in)),
        "status": "pending",
    }
    card.update(extra)
    return card


def queue_key(card: dict) -> tuple:
    """The server's order of the inbox (approvals/inbox_pages.py): escalated, risk, deadline, id."""
    return (0 if card.get("escalated_at") else 1, {"high": 0, "low": 1}.get(card.get("hitl_tier"), 2),
            card["expires_at"], card["id"])


def clarification_card(*, schema: dict | None = None, message: str = "Which follow-up should be booked?", **kw: Any) -> dict[str, Any]:
    card = approval_card(
        tool=kw.pop("tool", "scheduling.book_followup"),
        op=kw.pop("op", "create"),
        rule_id=kw.pop("rule_id", "clarification.missing-fields"),
        explanation=kw.pop("explanation", "The agent needs more information before it can continue."),
        args=kw.pop("args", {"clinic": "cardiology"}),
        tier=kw.pop("tier", None),
        **kw,
    )
    card.update(reason_code="clarification", message=message, resume_schema=schema or sample_clarification_schema())
    return card


def sample_clarification_schema() -> dict[str, Any]:
    """One field of every kind the inbox renders (mirrors approvals/resume_schemas.py hints)."""
    return {
        "type": "object",
        "properties": {
            "clinic": {"type": "string", "title": "Clinic", "enum": ["cardiology", "renal", "diabetes"]},
            "urgency": {
                "type": "string",
                "title": "Urgency",
                "oneOf": [
                    {"const": "routine", "title": "Routine"},
                    {"const": "soon", "title": "Within 2 weeks"},
                    {"const": "urgent", "title": "Urgent"},
                ],
                "x-condor-widget": "radio",
            },
            "tests": {
                "type": "array",
                "title": "Tests before the visit",
                "items": {"anyOf": [
                    {"const": "ecg", "title": "ECG"},
                    {"const": "echo", "title": "Echocardiogram"},
                    {"const": "bloods", "title": "Bloods (U&E)"},
                ]},
            },
            "visit_date": {
                "type": "string",
                "format": "date",
                "title": "Visit date",
                "formatMinimum": "2030-01-01",
                "formatMaximum": "2030-03-31",
            },
            "notes": {"type": "string", "title": "Notes for the clinic", "x-condor-widget": "textarea"},
            "duration_min": {"type": "integer", "title": "Duration (minutes)", "minimum": 10, "maximum": 60},
            "interpreter": {"type": "boolean", "title": "Interpreter needed"},
        },
        "required": ["clinic", "urgency", "visit_date", "duration_min"],
    }


# --------------------------------------------------------------------------- harness


@dataclass
class Reply:
    status: int = 200
    body: Any = None
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
    auto_snapshot: bool = True  # every (re)connect gets the current pending set, like the server
    echo_removals: bool = True  # a successful decision also sends card.removed, like the server
    server_cards: dict[str, dict] = field(default_factory=dict)
    sockets: list[Any] = field(default_factory=list)
    received: list[Any] = field(default_factory=list)
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
    snapshot_status: int | None = None  # None: the snapshot endpoint is not served (404)
    poll_seconds: int = 10
    polls: int = 0
    approvals: dict[str, dict] = field(default_factory=dict)  # GET approvals/{id}/ bodies ("Show all")
    # The layout the page opens in (static/inbox/settings.js): "full" shows every card, as the
    # card tests expect; "queue" is the compact queue with a detail pane (the page's default).
    view: str = "full"
    # Serve the snapshot in pages of this many cards, in the server's order, as
    # approvals/inbox_pages.py does (None: every card in the snapshot, no cursor).
    page_size: int | None = None
    page_requests: list[Any] = field(default_factory=list)  # the cursors the page asked for
    answer_pages: bool = True  # False: page requests are recorded, never answered

    def __post_init__(self) -> None:
        if self.view:
            self.page.add_init_script(f"try {{ localStorage.setItem('condor.inbox.view', {json.dumps(self.view)}); }} catch (e) {{}}")
        pattern = re.escape(DECISION_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._decision_re = re.compile(f"^{pattern}$")
        stop_pattern = re.escape(STOP_URL_TEMPLATE).replace(re.escape("{id}"), r"(?P<id>[^/]+)")
        self._stop_re = re.compile(f"^{stop_pattern}$")
        self.page.context.add_cookies([{"name": "csrftoken", "value": CSRF_TOKEN, "url": ORIGIN}])
        self.page.on("pageerror", lambda err: self.page_errors.append(str(err)))
        self.page.route(f"{ORIGIN}/**", self._serve)
        self.page.route_web_socket(f"ws://{urlsplit(ORIGIN).netloc}{WS_PATH}", self._on_socket)

    # ---- page

    def open(self, cards: list[dict] = (), *, wait_live: bool = True) -> None:
        self.server_cards = {c["id"]: c for c in cards}
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
                self.received.append(json.loads(message))
            except (TypeError, ValueError):
                self.received.append(message)
                return
            if isinstance(self.received[-1], dict) and self.received[-1].get("type") == "page" and self.page_size:
                self.page_requests.append(self.received[-1].get("cursor"))
                if not self.answer_pages:
                    return
                ws.send(json.dumps({"type": "page", "after": self.received[-1].get("cursor"),
                                    **self.first_page(after=self.received[-1].get("cursor"))}))

        def on_close(code, reason):
            self._open.discard(id(ws))

        ws.on_message(on_message)
        ws.on_close(on_close)
        if self.auto_snapshot:
            ws.send(json.dumps({"type": "snapshot", **self.first_page()}))

    def first_page(self, after: str | None = None) -> dict:
        """The snapshot (or the page after the cursor `after`) as the server would send it."""
        if not self.page_size:
            return {"cards": list(self.server_cards.values())}
        ordered = sorted(self.server_cards.values(), key=queue_key)
        if after is not None:
            ordered = [card for card in ordered if list(queue_key(card)) > json.loads(after)]
        cards = ordered[:self.page_size]
        more = len(ordered) > self.page_size
        return {"cards": cards, "total": len(self.server_cards),
                "cursor": json.dumps(list(queue_key(cards[-1]))) if more else None}

    @property
    def socket(self):
        live = [ws for ws in self.sockets if id(ws) in self._open]
        return live[-1] if live else None

    def send(self, frame: dict) -> None:
        """Send a raw frame to the page on the current connection."""
        ws = self.socket
        if ws is None:
            raise AssertionError("the page has no open inbox websocket")
        ws.send(json.dumps(frame))

    def snapshot(self, cards: list[dict] | None = None) -> None:
        if cards is not None:
            self.server_cards = {c["id"]: c for c in cards}
        self.send({"type": "snapshot", **self.first_page()})

    def _total(self) -> dict:
        return {"total": len(self.server_cards)} if self.page_size else {}

    def add(self, card: dict) -> None:
        self.server_cards[card["id"]] = card
        if self.socket is not None:
            self.send({"type": "card.added", "card": card, **self._total()})

    def update(self, card: dict) -> None:
        self.server_cards[card["id"]] = card
        if self.socket is not None:
            self.send({"type": "card.updated", "card": card})

    def remove(self, approval_id: str, status: str = "approved", decided_by: str | None = "alice") -> None:
        self.server_cards.pop(approval_id, None)
        if self.socket is not None:
            self.send({"type": "card.removed", "id": approval_id, "status": status, "decided_by": decided_by,
                       **self._total()})

    def drop_connection(self, code: int = 1012, reason: str = "server restart") -> None:
        ws = self.socket
        assert ws is not None, "no open connection to drop"
        self._open.discard(id(ws))
        ws.close(code=code, reason=reason)

    def wait_for_connections(self, count: int, timeout: float = 15.0) -> None:
        self._wait(lambda: len(self.sockets) >= count, timeout, f"{count} websocket connections")

    # ---- decision API

    def reply_next(self, approval_id: str, status: int = 200, body: Any = None, *, before: Callable[[], None] | None = None) -> None:
        """Queue the answer to the next decision POST for this approval.

        `before` runs while the request is in flight, e.g. to push a card.removed first.
        """
        self.replies.setdefault(approval_id, []).append(Reply(status=status, body=body, before=before))

    def fail_network_next(self, approval_id: str) -> None:
        self.replies.setdefault(approval_id, []).append(Reply(network_error=True))

    def wait_for_decisions(self, count: int = 1, timeout: float = 5.0) -> list[Decision]:
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
        reply = queued.pop(0) if queued else self._default_reply(approval_id, body)
        if reply.before is not None:
            reply.before()
        if reply.network_error:
            route.abort("connectionreset")
            return
        if reply.status == 200 and self.echo_removals and approval_id in self.server_cards:
            approved = not isinstance(body, dict) or body.get("approved", True) is not False
            self.remove(approval_id, "approved" if approved else "rejected", self.username)
        route.fulfill(status=reply.status, content_type="application/json", body=json.dumps(reply.body))

    def _default_reply(self, approval_id: str, body: Any) -> Reply:
        card = self.server_cards.get(approval_id)
        if card is None:
            return Reply(409, {"error": "approval_not_pending", "detail": "This approval is no longer pending."})
        approved = not isinstance(body, dict) or body.get("approved", True) is not False
        result = {**card, "status": "approved" if approved else "rejected", "decided_by": self.username}
        return Reply(200, result)

    def wait_for_stops(self, count: int = 1, timeout: float = 5.0) -> list[Decision]:
        self._wait(lambda: len(self.stops) >= count, timeout, f"{count} stop request(s)")
        return self.stops

    def _stop(self, route, run_id: str) -> None:
        request = route.request
        self.stops.append(Decision(run_id, json.loads(request.post_data or "null"), dict(request.headers)))
        reply = self.stop_replies.pop(0) if self.stop_replies else Reply(200, {"id": run_id, "state": "aborted",
                                                                            "terminal_reason": "user_stopped"})
        route.fulfill(status=reply.status, content_type="application/json", body=json.dumps(reply.body))

    # ---- HTTP

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
        if path == INBOX_PATH:
            route.fulfill(status=200, content_type="text/html; charset=utf-8",
                          body=render_inbox(self.username, self.poll_seconds))
            return
        if path == CARDS_URL and request.method == "GET" and self.snapshot_status is not None:
            self.polls += 1
            cards = list(self.server_cards.values())
            body = ({"count": len(cards), "next": None, "previous": None, "results": cards}
                    if self.snapshot_status == 200 else {"error": "permission_denied", "detail": "Not a reviewer."})
            route.fulfill(status=self.snapshot_status, content_type="application/json", body=json.dumps(body))
            return
        approval_id = path[len("/api/v1/approvals/"):-1] if path.startswith("/api/v1/approvals/") else None
        if approval_id in self.approvals and request.method == "GET":
            route.fulfill(status=200, content_type="application/json", body=json.dumps(self.approvals[approval_id]))
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
        if path == "/accounts/logout/" and request.method == "POST":
            self.logouts.append(request.post_data or "")
            route.fulfill(status=200, content_type="text/plain", body="signed out")
            return
        route.fulfill(status=404, content_type="text/plain", body="not found")

    def _wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        # Route and websocket handlers only run while Playwright is waiting, so poll through it.
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self.page.wait_for_timeout(20)


def demo_cards() -> list[dict]:
    """Six varied cards for screenshots and manual review."""
    return [
        approval_card(
            tier="high", expires_in=45, tool="ehr.medication_order", op="create", patient_ref="MRN-20417",
            title="Sepsis pathway — bay 3", client="sepsis-agent", rule_id="tier.high.mutate",
            explanation="Prescribing on a high-tier tool needs a clinician's approval.",
            args={"drug": "gentamicin", "dose_mg_per_kg": 5, "route": "IV", "frequency": "once daily",
                  "weight_kg": 72.4, "renal_function": {"egfr": 48, "measured": "2030-01-14"}},
        ),
        approval_card(
            tier="high", expires_in=540, tool="ehr.allergy_record", op="delete", patient_ref="MRN-33108",
            title="Medicines reconciliation", client="pharmacy-agent", rule_id="tier.high.delete",
            explanation="Removing an allergy entry is irreversible without review.",
            args={"allergy_id": "AL-99812", "substance": "penicillin", "reason": "Recorded in error — tolerated amoxicillin 2029"},
        ),
        clarification_card(
            patient_ref="MRN-11873", title="Heart failure follow-up", client="clinic-scheduler",
            message="Which clinic and date should the follow-up be booked for?", expires_in=1500,
        ),
        approval_card(
            tier="low", expires_in=880, tool="comms.send_letter", op="send", patient_ref="MRN-11873",
            title="Heart failure follow-up", client="clinic-scheduler", rule_id="comms.external",
            explanation="Letters leaving the trust are reviewed.",
            args={"to": "GP practice — Elm Street Surgery", "template": "discharge_summary_v3", "attachments": ["summary.pdf"]},
        ),
        approval_card(
            tier="low", expires_in=3900, tool="lab.order_panel", op="create", patient_ref="MRN-50221",
            title="Diabetes annual review", client="primary-care-agent", rule_id="tier.low.mutate",
            explanation="Orders on low-tier tools are spot-checked by a reviewer.",
            args={"panel": "HbA1c", "priority": "routine", "collect_by": "2030-02-01"},
        ),
        approval_card(
            tier=None, expires_in=1200, tool="notes.append", op="update", patient_ref="MRN-50221",
            title="Diabetes annual review", client="primary-care-agent", rule_id="untrusted.input",
            explanation="The note quotes text from an untrusted document.",
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
            page.wait_for_timeout(300)
            page.screenshot(path=str(path), full_page=True)
        finally:
            browser.close()
    return path


if __name__ == "__main__":  # pragma: no cover - manual tool
    print(save_demo_screenshot(sys.argv[1] if len(sys.argv) > 1 else ARTIFACTS_DIR / "inbox.png"))
