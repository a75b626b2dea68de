"""The inbox's search and filters, answered over every pending card the reviewer may see.

GET /api/v1/inbox/cards/ with `patient_ref`, `ward`, `tool` or `risk` (inbox/card_views.py)
answers the cards that match, in pages as the unfiltered snapshot comes (inbox/pages.py:
at most PAGE_CARDS cards and PAGE_MAX_BYTES, a total, a signed cursor), so the queue says how many
match in all before the reviewer scrolls.

A patient search is a prefix of `patient_ref`, case-insensitive, never a substring: "MRN-7"
finds MRN-7 and MRN-70345, not MRN-17. The cards of a patient whose ref is exactly the search
come first, then the prefix matches; within each, the queue's own order. So `j` after typing a
whole ref lands on that patient, however many others share the prefix.

A cursor names the filters it was sent for: one sent for another search is an invalid cursor,
never a page of the wrong cards.
"""

import hashlib
import json
from dataclasses import asdict, dataclass
from datetime import datetime

from django.core import signing
from django.db.models import Case, Count, F, IntegerField, Value, When
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan

from approvals import cards
from approvals.models.approval import ESCALATION_RANK, RISK_RANK
from approvals.visibility import ReviewerScope
from core import identifiers
from core.errors import InvalidCursor, InvalidPayload
from inbox import pages as inbox_pages
from sessions_app.models.session import CARE_UNIT_MAX_LENGTH, Session

PATIENT_REF_MAX_LENGTH = Session._meta.get_field("patient_ref").max_length
TOOL_MAX_LENGTH = 100
RISKS = {"high": 0, "low": 1, "none": 2}  # the queue's risk filter, as RISK_RANK ranks the tiers
PARAMS = ("patient_ref", "ward", "tool", "risk")
_CURSOR_SALT = "inbox.search"
# The cards' share of a page, leaving room for `patient_totals`: a count for each of up to
# PAGE_CARDS patients, each ref JSON-escaped at worst six bytes a character.
_CARDS_MAX_BYTES = inbox_pages.PAGE_MAX_BYTES - inbox_pages.PAGE_CARDS * (PATIENT_REF_MAX_LENGTH * 6 + 16)


@dataclass(frozen=True)
class CardFilters:
    """What the reviewer narrowed the queue to; an empty field narrows nothing."""

    patient_ref: str = ""
    ward: str = ""
    tool: str = ""
    risk: str = ""

    def __bool__(self) -> bool:
        return any(asdict(self).values())

    def digest(self) -> str:
        """Names these filters in a cursor, so a cursor cannot continue another search."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def _text(params, name: str, limit: int) -> str:
    value = params.get(name, "")
    if len(value) > limit:
        raise InvalidPayload(f"{name}: at most {limit} characters.")
    # The control-character middleware refuses these on every view; a caller past it still cannot search with one.
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise InvalidPayload(f"{name}: control characters are not allowed.")
    return value.strip()


def parse(params) -> CardFilters:
    """The filters a request's query parameters ask for; InvalidPayload (400) naming the first bad one."""
    tool = _text(params, "tool", TOOL_MAX_LENGTH)
    if tool and not identifiers.TOOL_NAME_RE.fullmatch(tool):
        raise InvalidPayload("tool: a tool name is letters, digits, '.', '_' and '-' only.")
    risk = _text(params, "risk", 8)
    if risk and risk not in RISKS:
        raise InvalidPayload(f"risk: one of {', '.join(RISKS)}.")
    return CardFilters(
        patient_ref=_text(params, "patient_ref", PATIENT_REF_MAX_LENGTH),
        ward=_text(params, "ward", CARE_UNIT_MAX_LENGTH),
        tool=tool,
        risk=risk,
    )


def _matching(scope: ReviewerScope, filters: CardFilters):
    """The reviewer's pending cards that match."""
    matched = inbox_pages.pending(scope)
    if filters.patient_ref:
        matched = matched.filter(session__patient_ref__istartswith=filters.patient_ref)
    if filters.ward:
        matched = matched.filter(session__care_unit=filters.ward)
    if filters.tool:
        matched = matched.filter(tool=filters.tool)
    if filters.risk == "none":
        matched = matched.exclude(hitl_tier__in=["high", "low"])  # no tier, as RISK_RANK ranks it
    elif filters.risk:
        matched = matched.filter(hitl_tier=filters.risk)
    return matched


def _ordered(matched, filters: CardFilters):
    """`matched` in the search's order: the exact patient first, then the queue's order."""
    exact = (When(session__patient_ref__iexact=filters.patient_ref, then=Value(0)),) if filters.patient_ref else ()
    return matched.annotate(
        match_rank=Case(*exact, default=Value(1), output_field=IntegerField()),
        escalation_rank=ESCALATION_RANK,
        risk_rank=RISK_RANK,
    ).order_by("match_rank", "escalation_rank", "risk_rank", "expires_at", "pk")


def _after(key: tuple):
    return TupleGreaterThan(
        Tuple(F("match_rank"), F("escalation_rank"), F("risk_rank"), F("expires_at"), F("pk")), list(key)
    )


def cursor_encoder(filters: CardFilters):
    """The cursor after a card of this search whose sort key (match, escalation, risk, expires_at, pk) is `key`."""

    def encode(key: tuple) -> str:
        match, escalation, risk, expires_at, pk = key
        return signing.dumps(
            [filters.digest(), match, escalation, risk, expires_at.isoformat(), str(pk)],
            salt=_CURSOR_SALT,
            compress=True,
        )

    return encode


def decode_cursor(filters: CardFilters, cursor) -> tuple:
    """The sort key a cursor of this search names; InvalidCursor for any other (another search's included)."""
    try:
        digest, match, escalation, risk, expires_at, pk = signing.loads(cursor, salt=_CURSOR_SALT)
        if digest != filters.digest():
            raise ValueError("another search's cursor")
        return int(match), int(escalation), int(risk), datetime.fromisoformat(expires_at), pk
    except (signing.BadSignature, TypeError, ValueError):
        raise InvalidCursor() from None


def message(scope: ReviewerScope, filters: CardFilters, cursor: str | None = None) -> str:
    """The page of matching cards after `cursor` (None: the first) as the endpoint's JSON text:
    `{patient_totals, cards, total, cursor}`. `patient_totals` counts, for each patient on the
    page, every card of theirs that matches: the queue's group headers say it before any scrolling.
    Five queries however many cards match: the rows, the count, the per-patient counts and the
    two card-building reads."""
    key = decode_cursor(filters, cursor) if cursor is not None else None
    matched = _matching(scope, filters)
    ordered = _ordered(matched, filters)
    if key is not None:
        ordered = ordered.filter(_after(key))
    rows = list(
        ordered.values(*cards.CARD_ROW, "match_rank", "escalation_rank", "risk_rank")[: inbox_pages.PAGE_CARDS + 1]
    )
    more = len(rows) > inbox_pages.PAGE_CARDS
    rows = rows[: inbox_pages.PAGE_CARDS]
    keys = [(r["match_rank"], r["escalation_rank"], r["risk_rank"], r["expires_at"], r["id"]) for r in rows]
    page = inbox_pages.assemble(
        cards.cards_for_rows(rows),
        keys,
        more=more,
        total=matched.count(),
        cursor=cursor,
        max_bytes=_CARDS_MAX_BYTES,
        encode=cursor_encoder(filters),
    )
    return page.message({"patient_totals": patient_totals(matched, page.cards)})


def patient_totals(matched, page_cards: list[dict]) -> dict[str, int]:
    """How many of `matched` each patient on the page has (one grouped count over those patients)."""
    refs = {card["session"]["patient_ref"] for card in page_cards}
    if not refs:
        return {}
    counted = (
        matched.filter(session__patient_ref__in=refs)
        .order_by()
        .values("session__patient_ref")
        .annotate(n=Count("pk"))
        .values_list("session__patient_ref", "n")
    )
    return dict(counted)


# The most options a filter offers: a hospital's wards and an agent fleet's tools stay well under it.
OPTIONS_MAX = 200


def options(scope: ReviewerScope) -> dict:
    """The values the ward and tool filters can take, over every pending card the reviewer may see,
    each with how many cards have it: `{"wards": [{value, count}], "tools": [...]}`, by value."""
    waiting = inbox_pages.pending(scope).order_by()

    def counted(field: str) -> list[dict]:
        rows = (
            waiting.exclude(**{field: ""})
            .values(field)
            .annotate(n=Count("pk"))
            .order_by(field)
            .values_list(field, "n")[:OPTIONS_MAX]
        )
        return [{"value": value, "count": n} for value, n in rows]

    return {"wards": counted("session__care_unit"), "tools": counted("tool")}
