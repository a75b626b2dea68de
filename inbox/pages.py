"""The inbox websocket's snapshot, a page at a time, so an inbox holding thousands of cards opens at once.

A page is at most PAGE_CARDS cards in the queue's default order (inbox/static/inbox/list.js:
escalated first, then high, low, no tier, then the soonest deadline, then the id), with
the count of every pending card the reviewer may see, and a cursor naming the last card
sent. The page asks for the next one with that cursor: keyset pagination, so a page
deep in 10,000 cards costs what the first one does, and a card decided meanwhile
shifts nothing (an OFFSET would skip a card for every card removed before it).

No frame is over PAGE_MAX_BYTES: a page that would pass it stops at the card before,
and its cursor says where to continue. A lone card too big for a frame sheds what it
can do without, a step at a time (_LAST_RESORT), until it fits: what is left is bounded
by the limits on every field, so it always does.

The cursor is signed, so a bad one is told apart from an old one: a forged or
garbled cursor is an error (InvalidCursor), never a silent first page. It carries
no visibility: the reviewer's scope is read again for every page (consumers.py).
"""

import json
from dataclasses import dataclass, field
from datetime import datetime

from django.core import signing
from django.db.models import F
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan
from django.utils import timezone

from approvals import cards
from approvals.models import Approval, ApprovalStatus
from approvals.models.approval import ESCALATION_RANK, RISK_RANK
from approvals.visibility import ReviewerScope
from core.errors import InvalidCursor

PAGE_CARDS = 100
PAGE_MAX_BYTES = 256 * 1024
_CURSOR_SALT = "inbox.pages"
_KEY = ("escalation_rank", "risk_rank", "expires_at", "pk")
# Room kept in a frame for what is written after the cards are counted: its type, the
# `after` key and the next cursor (a signed cursor is about 150 characters).
_FRAME_SLACK = 512


def queue_ordered(approvals):
    """`approvals` with the sort key of the inbox queue's default order, in that order."""
    return approvals.annotate(escalation_rank=ESCALATION_RANK, risk_rank=RISK_RANK).order_by(*_KEY)


def pending(scope: ReviewerScope):
    """Every pending, unexpired card the reviewer may see."""
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
    return len(json.dumps(value))  # json.dumps writes ASCII: its length is the frame's bytes


# What a lone card too big for a frame drops, in turn, until it fits. First its args, as
# approvals/cards.py cuts large args: "Show all" loads them from the approval, and nothing
# approves or edits the card before that. Then the grants its run holds (an unbounded list):
# the page keeps what it knows of them from the run's other cards and the removal notices
# (inbox/static/inbox/runs.js). Last, what the approval says at length (its message, explanation,
# form and counted approvals): the same "Show all" loads them from the approval with the args
# (inbox/static/inbox/full_args.js). What is then left (ids, the session's and the call's short
# fields, the rationale's 2000 characters) is bounded well under PAGE_MAX_BYTES.
# `cut_fields` names what was dropped (set to null), so the page knows what to load.
_LAST_RESORT = (
    {"args": None, "args_truncated": True, "args_preview": ""},
    {"run_granted": None},
    {"message": None, "explanation": None, "resume_schema": None, "approvals": None},
)


def _shed(card: dict, room: int) -> tuple[dict, str]:
    """`card` with as few of _LAST_RESORT's steps taken as make it fit `room` bytes, and its text."""
    cut_fields = []
    for step in _LAST_RESORT:
        cut_fields += [name for name in step if name not in ("args_truncated", "args_preview")]
        card = {**card, **step, "cut_fields": cut_fields[:]}
        text = json.dumps(card)
        if len(text) <= room:
            break
    return card, text


@dataclass
class Page:
    """One page: its cards, each card's JSON text (written once, to size it, then sent as it is),
    the total and the cursor after the last card."""

    cards: list[dict] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    total: int = 0
    cursor: str | None = None

    def body(self) -> dict:
        return {"cards": self.cards, "total": self.total, "cursor": self.cursor}

    def message(self, head: dict | None = None) -> str:
        """`json.dumps({**head, **self.body()})`, from the cards' texts as written: the socket's
        message, or with no head the polling endpoint's body (inbox/card_views.py)."""
        start = json.dumps(head)[:-1] + ", " if head else "{"
        tail = json.dumps({"total": self.total, "cursor": self.cursor})
        return f'{start}"cards": [{", ".join(self.texts)}], {tail[1:]}'


def page(scope: ReviewerScope, cursor: str | None = None, *, max_bytes: int = PAGE_MAX_BYTES) -> dict:
    """The page of the reviewer's pending cards after `cursor` (None: the first), as a frame body."""
    return build(scope, cursor, max_bytes=max_bytes).body()


def frame(scope: ReviewerScope, cursor: str | None = None) -> str:
    """The socket's message for the page after `cursor`: the snapshot (None) or a page naming `after`."""
    head = {"type": "snapshot"} if cursor is None else {"type": "page", "after": cursor}
    return build(scope, cursor).message(head)


def build(scope: ReviewerScope, cursor: str | None = None, *, max_bytes: int = PAGE_MAX_BYTES) -> Page:
    """The page after `cursor`. Four queries however many cards wait: the page's rows, the
    count, and the two card-building reads (approvals/cards.py) for all of its cards at once.
    """
    key = decode_cursor(cursor) if cursor is not None else None
    waiting = pending(scope)
    ordered = queue_ordered(waiting)
    if key is not None:
        ordered = ordered.filter(_after(key))
    # One query for the page's rows, read down the queue index (approval_inbox_queue) until
    # PAGE_CARDS + 1 are found, with only the columns a card shows, as plain rows: a page of
    # model instances cost more to make than its cards do to build.
    rows = list(ordered.values(*cards.CARD_ROW, "escalation_rank", "risk_rank")[: PAGE_CARDS + 1])
    more = len(rows) > PAGE_CARDS
    rows = rows[:PAGE_CARDS]
    keys = [(row["escalation_rank"], row["risk_rank"], row["expires_at"], row["id"]) for row in rows]
    return assemble(
        cards.cards_for_rows(rows), keys, more=more, total=waiting.count(), cursor=cursor, max_bytes=max_bytes
    )


def page_body(
    approvals: list,
    *,
    total: int,
    cursor: str | None,
    max_bytes: int = PAGE_MAX_BYTES,
    page_cards: int = PAGE_CARDS,
    encode=encode_cursor,
    key=None,
) -> dict:
    """`page`'s body over up to `page_cards` + 1 approvals in queue order (each with its sort key
    annotated, or `key(approval)` saying it), for a caller holding model instances (the browser
    tests' server, tests/live)."""
    more = len(approvals) > page_cards
    approvals = approvals[:page_cards]
    key = key or (lambda a: (a.escalation_rank, a.risk_rank, a.expires_at, a.pk))
    keys = [key(a) for a in approvals]
    return assemble(
        cards.cards_for(approvals), keys, more=more, total=total, cursor=cursor, max_bytes=max_bytes, encode=encode
    ).body()


def assemble(
    built: list[dict],
    keys: list[tuple],
    *,
    more: bool,
    total: int,
    cursor: str | None,
    max_bytes: int = PAGE_MAX_BYTES,
    encode=encode_cursor,
) -> Page:
    """The first of `built` (cards in their order, `keys` their sort keys) that fit in `max_bytes`,
    with `encode(key)` of the last one's key as the cursor when more follow."""
    page = Page(total=total)
    size = _size(page.body()) + _size(cursor) + _FRAME_SLACK  # the envelope, and the `after` of a page
    for card in built:
        room = max_bytes - size - 2  # the separator ", "
        text = json.dumps(card)
        if len(text) > room:
            if page.cards:
                more = True
                break
            card, text = _shed(card, room)  # alone, and still too big
        page.cards.append(card)
        page.texts.append(text)
        size += len(text) + 2
    if more and page.cards:
        page.cursor = encode(keys[len(page.cards) - 1])
    return page


def pending_total(scope: ReviewerScope) -> int:
    """How many cards wait for this reviewer now: sent with each push that changes it."""
    return pending(scope).count()
