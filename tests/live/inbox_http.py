"""The REST side of the inbox harness (tests/live/inbox_harness.py): the decision, stop,
approval and card-list endpoints and the page's static files, answered from the harness's
rows with the server's own serializers and error bodies (tests/live/inbox_rows.py)."""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.utils import timezone

from approvals import claims
from approvals.models import ApprovalStatus
from core.errors import ApprovalNotPending, CondorError, NotFound
from inbox import search as inbox_search
from tests.helpers.waits import HANG_SECONDS
from tests.live.inbox_page import CARDS_URL, INBOX_PATH, STATIC_DIRS, render_inbox
from tests.live.inbox_rows import (
    approval_body,
    card_page,
    error_response,
    reviewer,
    search_page,
    stopped_run_body,
    unrouted_response,
)


@dataclass
class Reply:
    """The next answer to one request: an error the server raises, or a dropped connection."""

    error: Exception | None = None
    network_error: bool = False
    before: Callable[[], None] | None = None  # runs while the request is in flight
    ended: tuple[str, str] | None = None  # a stop's answer for a run that had ended: (state, terminal reason)


@dataclass
class Decision:
    approval_id: str
    body: Any
    headers: dict[str, str]


class InboxHttp:
    """InboxHarness's answers to the page's requests (a mixin: the harness holds the state it reads)."""

    # ---- decision API

    def refuse_next(self, approval_id: str, error: Exception) -> None:
        """The next decision POST for this approval raises `error` (a core.errors or DRF exception) on the server."""
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
        error = (
            reply.error
            or (NotFound() if row is None else None)
            or (ApprovalNotPending() if row.status != ApprovalStatus.PENDING else None)
        )
        if error is not None:
            self._fulfil(route, *error_response(error))
            return
        body = body if isinstance(body, dict) else {}
        approved = body.get("approved", True) is not False
        status = ApprovalStatus.APPROVED if approved else ApprovalStatus.REJECTED
        try:
            met = self.rows.decide(
                approval_id,
                status,
                self.username,
                reason=body.get("reason") or "",
                edited_args=body.get("edited_args"),
                values=body.get("values"),
            )
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
        self._fulfil(route, 200, stopped_run_body(held[0], *(reply.ended or ())))

    # ---- claims

    def _claim(self, route, approval_id: str, *, releasing: bool) -> None:
        """As approvals/claim_views.py: the row changes, its push (sent on commit) goes out, then the answer."""
        row = self.rows.by_id.get(approval_id)
        error = (NotFound() if row is None else None) or (
            ApprovalNotPending() if row.status != ApprovalStatus.PENDING else None
        )
        if error is None:
            try:
                claims.refuse_if_claimed_by_other(row, reviewer(self.username), timezone.now())
            except CondorError as refused:
                error = refused
        if error is not None:
            self._fulfil(route, *error_response(error))
            return
        if releasing:
            self.rows.release(approval_id)
        else:
            self.rows.claim(approval_id, self.username)
        # The push can beat the answer to the page (it does on a real server, often).
        self._push(self.rows.updated(approval_id))
        if releasing:
            route.fulfill(status=204, body="")
        else:
            self._fulfil(
                route, 200, {"claimed_by": self.username, "claim_expires_at": row.claim_expires_at.isoformat()}
            )

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
            route.fulfill(
                status=200,
                content_type="text/html; charset=utf-8",
                body=render_inbox(self.username, self.poll_seconds, self.quick_reasons),
            )
            return
        query = parse_qs(urlsplit(request.url).query, keep_blank_values=True)
        if path == CARDS_URL and request.method == "GET" and set(query) & set(inbox_search.PARAMS):
            # The queue's search: answered whether or not the socket is up, and not a poll.
            params = {name: values[-1] for name, values in query.items()}
            self.searches.append(params)
            self._fulfil(route, *search_page(self.rows, params))
            return
        if path == f"{CARDS_URL}filters/" and request.method == "GET":
            self._fulfil(route, 200, self.rows.filter_options())
            return
        if path == CARDS_URL and request.method == "GET" and self.cards_served:
            self.polls += 1
            cursor = parse_qs(urlsplit(request.url).query, keep_blank_values=True).get("cursor", [None])[0]
            self.polled_cursors.append(cursor)
            if self.cards_refusal is not None:
                self._fulfil(route, *error_response(self.cards_refusal))
            else:
                self._fulfil(route, *card_page(self.rows, cursor))
            return
        if path.startswith("/static/"):
            for folder in STATIC_DIRS:  # as the staticfiles finders look: the project's, then the app's
                target = (folder / path[len("/static/") :]).resolve()
                if folder.resolve() in target.parents and target.is_file():
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
        claim = self._claim_re.match(path)
        if claim and request.method in ("POST", "DELETE"):
            self._claim(route, claim.group("id"), releasing=request.method == "DELETE")
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
