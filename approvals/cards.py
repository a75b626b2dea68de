"""The reviewer's view of an approval: the card pushed to the inbox and its removal notice.

A card also names the grants its run still holds (`run_granted`: approved, not
yet used by the agent), so the inbox can show every card of one run together and
say, before a reviewer stops the run, exactly which cards that withdraws. The
run's other pending cards are cards of their own; the page groups them by
`run_id`, and keeps `run_granted` current from the `card.removed` notices (which
name the run, tool and op for that reason).
"""

from collections import defaultdict

from django.conf import settings
from django.utils import timezone

from approvals.card_context import contexts_for, contexts_for_calls, empty_context
from approvals.models import Approval, ApprovalStatus
from core.hashing import canonical_json_fast


def _args(args) -> dict:
    """The args, whole up to CONDOR_CARD_ARGS_MAX_BYTES of canonical JSON; past it, a marked preview.

    A cut card carries no `args` at all (only the start of their canonical text, to
    read), so nothing can approve or edit it until the full args are fetched from
    the approval itself: what the reviewer approves is always what they were shown.
    """
    text = canonical_json_fast(args)  # the same bytes, without the reference encoder's cost per card
    limit = settings.CONDOR_CARD_ARGS_MAX_BYTES
    if len(text) <= limit:
        return {"args": args, "args_truncated": False, "args_bytes": len(text)}
    return {
        "args": None,
        "args_truncated": True,
        "args_bytes": len(text),
        # Cut on a character boundary: a partial UTF-8 sequence at the end is dropped.
        "args_preview": text[:limit].decode("utf-8", errors="ignore"),
    }


def args_cut(args) -> bool:
    """True when a card shows only a preview of `args` (the reviewer must load them to approve)."""
    return cut_at(len(canonical_json_fast(args)))


def cut_at(size: int) -> bool:
    """True when args of `size` canonical bytes are shown as a preview only (args_cut, from a known size)."""
    return size > settings.CONDOR_CARD_ARGS_MAX_BYTES


# The columns a card shows, as `.values()` names them: a page reads its rows this way, with
# no model instances (inbox_pages.py), and `row_of` reads the same from an approval in hand,
# so one builder (`card_of_row`) writes both the page's cards and the pushed ones.
CARD_ROW = (
    "id",
    "run_id",
    "session_id",
    "tool",
    "op",
    "tool_call_id",
    "reason_code",
    "rule_id",
    "explanation",
    "hitl_tier",
    "args",
    "approved_args",
    "payload_hash",
    "message",
    "resume_schema",
    "requested_at",
    "expires_at",
    "status",
    "claimed_by_id",
    "claim_expires_at",
    "approvals_required",
    "approvals",
    "escalated_at",
    "bound_context",
    "locked_args",
    "session__title",
    "session__patient_ref",
    "session__age_band",
    "session__consent",
    "session__tainted",
    "session__care_unit",
    "session__client__name",
    "claimed_by__username",
)


def row_of(approval, now=None) -> dict:
    """An approval (and its session, client and claimant) as the `CARD_ROW` row of it."""
    session = approval.session
    return {
        "id": approval.pk,
        "run_id": approval.run_id,
        "session_id": session.pk,
        "tool": approval.tool,
        "op": approval.op,
        "tool_call_id": approval.tool_call_id,
        "reason_code": approval.reason_code,
        "rule_id": approval.rule_id,
        "explanation": approval.explanation,
        "hitl_tier": approval.hitl_tier,
        "args": approval.args,
        "approved_args": approval.approved_args,
        "payload_hash": approval.payload_hash,
        "message": approval.message,
        "resume_schema": approval.resume_schema,
        "bound_context": approval.bound_context,
        "locked_args": approval.locked_args,
        "requested_at": approval.requested_at,
        "expires_at": approval.expires_at,
        "status": approval.status,
        "session__title": session.title,
        "session__patient_ref": session.patient_ref,
        "session__age_band": session.age_band,
        "session__consent": session.consent,
        "session__tainted": session.tainted,
        "session__care_unit": session.care_unit,
        "session__client__name": session.client.name,
        **_claim_row(approval, timezone.now() if now is None else now),
    }


def _claim_row(approval, now) -> dict:
    """The claim and quorum columns of `approval`; the claimant is read only for a live claim
    (an expired one shows no name, and reading it would be a query for nothing)."""
    live = _live(approval.claimed_by_id, approval.claim_expires_at, now)
    return {
        "claimed_by_id": approval.claimed_by_id,
        "claim_expires_at": approval.claim_expires_at,
        "claimed_by__username": approval.claimed_by.get_username() if live else None,
        "approvals_required": approval.approvals_required,
        "approvals": approval.approvals,
        "payload_hash": approval.payload_hash,
        "escalated_at": approval.escalated_at,
    }


def _live(claimed_by_id, claim_expires_at, now) -> bool:
    return claimed_by_id is not None and claim_expires_at is not None and claim_expires_at > now


def card(approval, *, run_granted: list[dict] | None = None, context: dict | None = None) -> dict:
    if context is None:
        context = contexts_for([approval]).get((approval.run_id, approval.tool_call_id)) or empty_context()
    if run_granted is None:
        run_granted = granted_in_runs([approval.run_id])[approval.run_id]
    now = timezone.now()
    return card_of_row(row_of(approval, now), run_granted=run_granted, context=context, now=now)


def card_of_row(row: dict, *, run_granted: list[dict], context: dict, now=None) -> dict:
    """The card of one `CARD_ROW` row, with its run's grants and its call's context (the key order
    is the wire's: a page's cards and a push's are the same bytes)."""
    approved_args = row["approved_args"]
    return {
        "id": str(row["id"]),
        "run_id": str(row["run_id"]),
        "session": {
            "id": str(row["session_id"]),
            "title": row["session__title"],
            "patient_ref": row["session__patient_ref"],
            "age_band": row["session__age_band"],
            "consent": row["session__consent"],
            "tainted": row["session__tainted"],
            "care_unit": row["session__care_unit"],
        },
        # The patient context this card shows and binds (approvals/bound_context.py): the session's when it parked.
        "bound_context": row["bound_context"],
        # Why the agent asked (its own words: plain text), what was said before it asked (the
        # conversation turn), under which autonomy, and what tainted the session.
        **context,
        "client": {"name": row["session__client__name"]},
        "tool": row["tool"],
        "op": row["op"],
        "tool_call_id": row["tool_call_id"],
        "reason_code": row["reason_code"],
        "rule_id": row["rule_id"],
        "explanation": row["explanation"],
        "hitl_tier": row["hitl_tier"],
        # Under four eyes an edit puts new args on the table before the quorum is met (quorum.py).
        **_args(approved_args if approved_args is not None else row["args"]),
        # What an edit may not change (approvals/locked_args.py): the inbox shows these read-only.
        "locked_args": row["locked_args"],
        "payload_hash": row["payload_hash"],
        "message": row["message"] or None,
        "resume_schema": row["resume_schema"],
        "requested_at": row["requested_at"].isoformat(),
        "expires_at": row["expires_at"].isoformat(),
        "status": row["status"],
        "run_granted": run_granted,
        **_claim_and_quorum(row, timezone.now() if now is None else now),
    }


def claim_and_quorum(approval) -> dict:
    """Who is working the card (a live claim only), how far its four eyes have got, and its escalation."""
    now = timezone.now()
    return _claim_and_quorum(_claim_row(approval, now), now)


def _claim_and_quorum(row: dict, now) -> dict:
    live = _live(row["claimed_by_id"], row["claim_expires_at"], now)
    return {
        "claimed_by": row["claimed_by__username"] if live else None,
        "claim_expires_at": row["claim_expires_at"].isoformat() if live else None,
        "approvals_required": row["approvals_required"],
        "approvals": _counted(row["approvals"], row["payload_hash"]),
        "escalated_at": row["escalated_at"].isoformat() if row["escalated_at"] else None,
    }


def counted_approvals(approval) -> list[dict]:
    """The approvals that count towards the quorum: those of the payload now on the table."""
    return _counted(approval.approvals, approval.payload_hash)


def _counted(votes, payload_hash: str) -> list[dict]:
    return [
        {"reviewer": vote["reviewer"], "at": vote["at"], "reason": vote["reason"]}
        for vote in votes or ()
        if vote.get("payload_hash") == payload_hash
    ]


def cards_for(approvals) -> list[dict]:
    """Cards for many approvals: one query for all their runs' grants, one for their calls' context (none per card)."""
    approvals = list(approvals)
    now = timezone.now()
    return _cards([row_of(approval, now) for approval in approvals], contexts_for(approvals), now)


def cards_for_rows(rows: list[dict]) -> list[dict]:
    """`cards_for` over `CARD_ROW` rows (a page's): the same two queries, no model instances."""
    calls = [(row["id"], row["run_id"], row["tool_call_id"], row["session__tainted"]) for row in rows]
    return _cards(rows, contexts_for_calls(calls), timezone.now())


def _cards(rows: list[dict], contexts: dict, now) -> list[dict]:
    granted = granted_in_runs({row["run_id"] for row in rows})
    return [
        card_of_row(
            row,
            run_granted=granted[row["run_id"]],
            now=now,
            context=contexts.get((row["run_id"], row["tool_call_id"])) or empty_context(),
        )
        for row in rows
    ]


def granted_in_runs(run_ids) -> dict:
    """run id → the grants it holds that an agent could still use: approved, unconsumed, unexpired."""
    rows = (
        Approval.objects.filter(run_id__in=list(run_ids), status=ApprovalStatus.APPROVED, expires_at__gt=timezone.now())
        .select_related("decided_by")
        .only(*_SIBLING_FIELDS)
        .order_by("decided_at")
    )
    granted = defaultdict(list)
    for approval in rows:
        granted[approval.run_id].append(sibling(approval))
    return granted


# What sibling() reads (`.only()` for a page's grants).
_SIBLING_FIELDS = ("id", "run_id", "tool", "op", "status", "decided_by_id", "decided_by__username")


def sibling(approval) -> dict:
    return {
        "id": str(approval.pk),
        "tool": approval.tool,
        "op": approval.op,
        "status": approval.status,
        "decided_by": _decided_by(approval),
    }


def _decided_by(approval) -> str | None:
    return approval.decided_by.get_username() if approval.decided_by_id else None


def added(approval, *, run_granted: list[dict] | None = None, context: dict | None = None) -> dict:
    return {"type": "card.added", "card": card(approval, run_granted=run_granted, context=context)}


def updated(approval) -> dict:
    """A pending card changed (claimed, released, one approval of its quorum counted)."""
    return {"type": "card.updated", "card": card(approval)}


def removed(approval) -> dict:
    # care_unit: the inbox socket drops the notice for reviewers who never saw the card (visibility.py).
    return {
        "type": "card.removed",
        "id": str(approval.pk),
        "status": approval.status,
        "care_unit": approval.session.care_unit,
        "decided_by": _decided_by(approval),
        "run_id": str(approval.run_id),
        "tool": approval.tool,
        "op": approval.op,
    }


def withdrawn(approval, *, cause: str, stopped_by: str | None) -> dict:
    """A withdrawn card's removal, saying why its run ended (`cause`, the terminal reason) and who
    stopped it: a reviewer working on the card is told so, and keeps what they typed."""
    return {**removed(approval), "cause": cause, "stopped_by": stopped_by}
