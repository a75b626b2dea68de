"""Pinned cards: the only write path, so spec validation and dense ranks can never diverge.

Every write locks the session row first (the lock order everywhere: session, run,
approvals), changes the pins, then renumbers them 0..n-1 in one UPDATE; two
concurrent writes on one session therefore queue, and each sees the other's ranks.
The ranks' uniqueness is also a (deferrable) database constraint.
"""

import json
import re

from django.db import transaction

from core.errors import CardNotReported, InvalidPayload, NotFound
from sessions_app.models import PinnedCard, ReportedCard, Session

KIND = re.compile(r"^[a-z][a-z0-9_.-]{0,59}$")
MAX_TITLE = 200
MAX_DATA_BYTES = 32 * 1024
MAX_PINS = 100


def validate_spec(spec, *, where: str = "card") -> dict:
    """A card spec `{kind, title, data}` (extra keys refused). Returns it normalised."""
    if not isinstance(spec, dict):
        raise InvalidPayload(f"The {where} must be an object {{kind, title, data}}.")
    unknown = sorted(set(spec) - {"kind", "title", "data"})
    if unknown:
        raise InvalidPayload(f"The {where} has unknown field(s): {', '.join(unknown)}.")
    kind, title, data = spec.get("kind"), spec.get("title"), spec.get("data", {})
    if not isinstance(kind, str) or not KIND.match(kind):
        raise InvalidPayload(f"The {where}'s kind must be a lowercase name like 'lab_result' (at most 60 characters).")
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE:
        raise InvalidPayload(f"The {where} needs a title of 1 to {MAX_TITLE} characters.")
    if not isinstance(data, dict):
        raise InvalidPayload(f"The {where}'s data must be an object.")
    if len(json.dumps(data, separators=(",", ":"))) > MAX_DATA_BYTES:
        raise InvalidPayload(f"The {where}'s data is larger than {MAX_DATA_BYTES // 1024} KB.")
    return {"kind": kind, "title": title.strip(), "data": data}


def record_reported(session_id, run_id, tool_call_id: str, cards: list) -> list[ReportedCard]:
    """Keep the cards a tool result reported, inside the result's transaction.

    A card's identity is its own `id` when it has one, else `<tool_call_id>#<index>`;
    reporting an identity again replaces the earlier card.
    """
    rows = []
    for index, card in enumerate(cards):
        own_id = card.get("id") if isinstance(card, dict) else None
        if own_id is not None and (not isinstance(own_id, str) or not 0 < len(own_id) <= 200):
            raise InvalidPayload(f"cards[{index}].id must be a string of 1 to 200 characters.")
        spec = validate_spec(
            {k: v for k, v in card.items() if k != "id"} if isinstance(card, dict) else card, where=f"cards[{index}]"
        )
        rows.append(
            ReportedCard(
                session_id=session_id,
                run_id=run_id,
                tool_call_id=tool_call_id,
                key=own_id or f"{tool_call_id}#{index}",
                **spec,
            )
        )
    return (
        ReportedCard.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["session", "key"],
            update_fields=["run_id", "tool_call_id", "kind", "title", "data", "reported_at"],
        )
        if rows
        else []
    )


def _lock(session_id) -> list[PinnedCard]:
    Session.objects.locked().filter(pk=session_id).first()
    return list(PinnedCard.objects.filter(session_id=session_id).order_by("order", "created_at"))


def _place(cards: list, card: PinnedCard, order) -> list:
    if order is not None and (not isinstance(order, int) or isinstance(order, bool) or order < 0):
        raise InvalidPayload("'order' must be a non-negative integer.")
    rest = [c for c in cards if c.pk != card.pk]
    rest.insert(len(rest) if order is None else min(order, len(rest)), card)
    return rest


def _rerank(cards: list) -> None:
    changed = []
    for rank, card in enumerate(cards):
        if card.order != rank:
            card.order = rank
            changed.append(card)
    if changed:
        # One UPDATE ... CASE: the rank constraint is checked at its end, so swaps are fine.
        PinnedCard.objects.bulk_update(changed, ["order"])


@transaction.atomic(durable=True)
def pin(session_id, *, spec: dict | None = None, source_card: str | None = None, order=None) -> PinnedCard:
    """Pin a new card spec, or a card reported earlier in the session (by its identity).

    Pinning the same reported card twice returns the pin it already has.
    """
    cards = _lock(session_id)
    if source_card is not None:
        existing = next((c for c in cards if c.source_card == source_card), None)
        if existing is not None:
            return existing
        reported = ReportedCard.objects.filter(session_id=session_id, key=source_card).first()
        if reported is None:
            raise CardNotReported(f"No card '{source_card}' was reported in this session.")
        spec = {"kind": reported.kind, "title": reported.title, "data": reported.data}
    else:
        spec = validate_spec(spec)
    if len(cards) >= MAX_PINS:
        raise InvalidPayload(f"A session holds at most {MAX_PINS} pinned cards; unpin one first.")
    card = PinnedCard(session_id=session_id, source_card=source_card or "", order=len(cards), **spec)
    card.save()
    _rerank(_place(cards, card, order))
    return card


@transaction.atomic(durable=True)
def update(session_id, card_id, changes: dict) -> PinnedCard:
    """Change a pinned card's kind, title, data (validated as a whole spec) and/or its position."""
    cards = _lock(session_id)
    card = next((c for c in cards if str(c.pk) == str(card_id)), None)
    if card is None:
        raise NotFound("No such pinned card in this session.")
    fields = {k: changes[k] for k in ("kind", "title", "data") if k in changes}
    if fields:
        spec = validate_spec({"kind": card.kind, "title": card.title, "data": card.data, **fields})
        for name, value in spec.items():
            setattr(card, name, value)
        card.save(update_fields=["kind", "title", "data", "updated_at"])
    if "order" in changes:
        _rerank(_place(cards, card, changes["order"]))
    return card


@transaction.atomic(durable=True)
def unpin(session_id, card_id) -> None:
    cards = _lock(session_id)
    card = next((c for c in cards if str(c.pk) == str(card_id)), None)
    if card is None:
        raise NotFound("No such pinned card in this session.")
    card.delete()
    _rerank([c for c in cards if c.pk != card.pk])


@transaction.atomic(durable=True)
def reorder(session_id, card_ids: list) -> list[PinnedCard]:
    """Put the pins in the given order; the list must name every pinned card exactly once."""
    cards = _lock(session_id)
    by_id = {str(c.pk): c for c in cards}
    wanted = [str(i) for i in card_ids]
    if sorted(wanted) != sorted(by_id):
        raise InvalidPayload("'ids' must list every pinned card of the session exactly once.")
    ordered = [by_id[i] for i in wanted]
    _rerank(ordered)
    return ordered
