"""The inbox websocket's snapshot, a page at a time (issue 11: an inbox that holds 10,000 cards).

A page is at most PAGE_CARDS cards in the queue's default order (static/inbox/list.js:
escalated first, then high, low, no tier, then the soonest deadline, then the id), with
the count of every pending card the reviewer may see, and a cursor naming the last card
sent. The page asks for the next one with that cursor: keyset pagination, so a page
deep in 10,000 cards costs what the first one does, and a card decided meanwhile
shifts nothing (an OFFSET would skip a card for every card removed before it).

No frame is over PAGE_MAX_BYTES: a page that would pass it stops at the card before,
and its cursor says where to continue. A lone card too big for a frame goes with its
args cut (the page fetches them in full, as for any cut card: approvals/cards.py).

The cursor is signed, so a bad one is told apart from an old one: a forged or
garbled cursor is an error (InvalidCursor), never a silent first page. It carries
no visibility: the reviewer's scope is read again for every page (consumers.py).
"""

import json
from datetime import datetime

from django.core import signing
from django.db.models import F
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan
from django.utils import timezone

from approvals import cards
from approvals.models import Approval, ApprovalStatus
from approvals.models.approval import ESCALATION_RANK, RISK_RANK
from approvals.visibility import ReviewerScope
from condor.errors import InvalidCursor

PAGE_CARDS = 100
PAGE_MAX_BYTES = 256 * 1024
_CURSOR_SALT = "approvals.inbox_pages"
_KEY = ("escalation_rank", "risk_rank", "expires_at", "pk")
# Room kept in a frame for what is written after the cards are counted: its type, the
# `after` key and the next cursor (a signed cursor is about 150 characters).
_FRAME_SLACK = 512


def queue_ordered(approvals):
    """`approvals` with the sort key of the inbox queue's default order, in that order."""
    return approvals.annotate(escalation_rank=ESCALATION_RANK, risk_rank=RISK_RANK).order_by(*_KEY)


def _pending(scope: ReviewerScope):
    return scope.visible(Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__gt=timezone.now()))


def _after(key: tuple):
    """Rows strictly after `key` in queue order: one row comparison, which the queue index
    (approval_inbox_queue) answers by seeking, so a deep page reads no more than the first.
    Django spells it out as ORs where the database has no row values."""
    return TupleGreaterThan(Tuple(ESCALATION_RANK, RISK_RANK, F("expires_at"), F("pk")), list(key))


def encode_cursor(key: tuple) -> str:
    """The cursor after the card whose sort key (escalation rank, risk rank, expires_at, pk) is `key`."""
    escalation, risk, expires_at, pk = key
    return signing.dumps([escalation, risk, expires_at.isoformat(), str(pk)], salt=_CURSOR_SALT, compress=True)


def decode_cursor(cursor) -> tuple:
    """The sort key a cursor names; InvalidCursor for anything this server did not sign."""
    try:
        escalation, risk, expires_at, pk = signing.loads(cursor, salt=_CURSOR_SALT)
        return int(escalation), int(risk), datetime.fromisoformat(expires_at), pk
    except (signing.BadSignature, TypeError, ValueError):
        raise InvalidCursor() from None


def _size(value) -> int:
    return len(json.dumps(value).encode())


def _cut(card: dict) -> dict:
    """The card with its args cut, as approvals/cards.py cuts large args: the page loads them in full."""
    return {**card, "args": None, "args_truncated": True, "args_preview": ""}


def page(scope: ReviewerScope, cursor: str | None = None, *, max_bytes: int = PAGE_MAX_BYTES) -> dict:
    """The page of the reviewer's pending cards after `cursor` (None: the first), as a frame body.

    Four queries however many cards wait: the page's rows, the count, and
    the two card-building reads (approvals/cards.py) for all of its cards at once.
    """
    key = decode_cursor(cursor) if cursor is not None else None
    pending = _pending(scope)
    ordered = queue_ordered(pending)
    if key is not None:
        ordered = ordered.filter(_after(key))
    # The page's ids come from the queue index (a subquery on narrow rows); only those rows
    # are read whole, with their joins: sorting every pending row whole cost ten times more.
    approvals = list(queue_ordered(Approval.objects.filter(pk__in=ordered.values("pk")[:PAGE_CARDS + 1]))
                     .select_related("session__client", "claimed_by"))
    return page_body(approvals, total=pending.count(), cursor=cursor, max_bytes=max_bytes)


def page_body(approvals: list, *, total: int, cursor: str | None, max_bytes: int = PAGE_MAX_BYTES,
              page_cards: int = PAGE_CARDS) -> dict:
    """The frame body for up to `page_cards` + 1 rows in queue order (each with its sort key annotated):
    the first `page_cards` that fit in `max_bytes`, the total, and the cursor after the last one sent."""
    more = len(approvals) > page_cards
    approvals = approvals[:page_cards]
    body = {"cards": [], "total": total, "cursor": None}
    size = _size(body) + _size(cursor) + _FRAME_SLACK  # the envelope, and the `after` the consumer adds
    sent = 0
    for card in cards.cards_for(approvals):
        room = max_bytes - size - 2  # the separator ", "
        card_size = _size(card)
        if card_size > room:
            if sent:
                more = True
                break
            card = _cut(card)  # alone, and still too big
            card_size = _size(card)
        body["cards"].append(card)
        size += card_size + 2
        sent += 1
    if more and sent:
        last = approvals[sent - 1]
        body["cursor"] = encode_cursor((last.escalation_rank, last.risk_rank, last.expires_at, last.pk))
    return body


def pending_total(scope: ReviewerScope) -> int:
    """How many cards wait for this reviewer now: sent with each push that changes it."""
    return _pending(scope).count()
