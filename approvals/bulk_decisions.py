"""A reviewer's bulk decision: several low-risk approval cards, one reason, one click.

A bulk is a list of cards, not a new kind of decision. Each card is decided on its own
by the single-decision service (`decisions.decide`), in its own transaction, under every
rule a single decision has: visibility, claims, four eyes, the payload shown, the policy
in force. Each card's audit row carries the bulk's id (`bulk_id`, a UUID) besides what a
single decision writes, so compliance can find every card of one bulk and still read
each decision alone.

What a bulk may hold is checked before anything is decided, and a refusal decides
nothing: at most `BULK_MAX_CARDS` distinct cards, every one a pending-or-not approval
card this reviewer may see (else 404, as one card would be), and every one low risk
(`hitl_tier` "low"): a high-risk card, an untiered one or a clarification is
`bulk_high_risk` (422). A card's tier is fixed when it is parked, so the check holds
for the decisions that follow. A card that cannot be decided when its turn comes
(decided meanwhile, claimed by another reviewer, needs a second reviewer) is reported
with its error code, and the others are decided all the same.
"""

import uuid
from dataclasses import dataclass

from approvals import decisions
from approvals.models import Approval, ReasonCode
from approvals.visibility import reviewer_scope
from audit import trail as audit
from core.errors import BulkHighRisk, BulkTooLarge, CondorError, InvalidPayload, NotFound

BULK_MAX_CARDS = 50


@dataclass(frozen=True)
class BulkCard:
    id: uuid.UUID
    payload_hash: str | None = None  # the payload the reviewer was shown, as for one approval


@dataclass(frozen=True)
class CardOutcome:
    id: uuid.UUID
    approval: Approval | None = None  # as the decision left it (pending: counted under four eyes)
    error: str = ""
    detail: str = ""


def _check(cards: list[BulkCard], user) -> None:
    """Refuse a bulk that may not be decided at all; nothing is written."""
    if len(cards) > BULK_MAX_CARDS:
        raise BulkTooLarge(
            f"A bulk decision takes at most {BULK_MAX_CARDS} cards ({len(cards)} sent). Nothing was decided."
        )
    scope = reviewer_scope(user)
    if scope is None:
        raise NotFound("No such approval.")
    ids = [card.id for card in cards]
    found = {
        a.pk: a
        for a in scope.visible(Approval.objects.select_related("session"))
        .filter(pk__in=ids)
        .only("pk", "hitl_tier", "reason_code", "tool", "op", "session__care_unit")
    }
    missing = [str(i) for i in ids if i not in found]
    if missing:
        raise NotFound(f"No such approval: {', '.join(missing)}.")
    refused = [a for a in (found[i] for i in ids) if a.reason_code != ReasonCode.APPROVAL or a.hitl_tier != "low"]
    if refused:
        named = "; ".join(f"{a.pk} ({a.tool} · {a.op}, {_risk(a)})" for a in refused)
        raise BulkHighRisk(
            f"Only low-risk approval cards may be decided in bulk; decide these one by one: {named}. "
            "Nothing was decided."
        )


def _risk(approval: Approval) -> str:
    if approval.reason_code != ReasonCode.APPROVAL:
        return "a question"
    return {"high": "high risk"}.get(approval.hitl_tier or "", "no risk tier")


def decide_bulk(cards: list[BulkCard], *, approved: bool, reason: str, user) -> tuple[uuid.UUID, list[CardOutcome]]:
    """Approve or reject every card of `cards` with `reason`, each as its own decision; (bulk id, outcomes).

    Runs outside any transaction: each card's decision is its own (decisions.decide is durable).
    """
    if len({card.id for card in cards}) != len(cards):
        raise InvalidPayload("A card may appear only once in a bulk decision.")
    _check(cards, user)
    bulk_id = uuid.uuid4()
    outcomes = []
    with audit.tagged(bulk_id=str(bulk_id)):
        for card in cards:
            body = {"approved": approved, "reason": reason}
            if approved and card.payload_hash is not None:
                body["payload_hash"] = card.payload_hash
            try:
                outcomes.append(CardOutcome(card.id, approval=decisions.decide(card.id, body, user=user)))
            except CondorError as refused:
                outcomes.append(CardOutcome(card.id, error=refused.code, detail=refused.detail))
    return bulk_id, outcomes
