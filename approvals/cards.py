"""The reviewer's view of an approval: the card pushed to the inbox and its removal notice.

A card also names the grants its run still holds (`run_granted`: approved, not
yet used by the agent), so the inbox can show every card of one run together and
say, before a reviewer stops the run, exactly which cards that withdraws. The
run's other pending cards are cards of their own; the page groups them by
`run_id`, and keeps `run_granted` current from the `card.removed` notices (which
name the run, tool and op for that reason).
"""

from collections import defaultdict

from django.utils import timezone

from approvals.card_context import contexts_for, empty_context
from approvals.models import Approval, ApprovalStatus

from django.conf import settings

from approvals.hashing import canonical_json_fast


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


# What card() reads of an approval and the rows it is joined to (`.only()` for a page of
# them: inbox_pages.py). A field card() reads that is not named here is a query per card,
# which the page's pinned query count catches.
CARD_FIELDS = (
    "id", "run_id", "tool", "op", "tool_call_id", "reason_code", "rule_id", "explanation", "hitl_tier",
    "args", "approved_args", "payload_hash", "message", "resume_schema", "requested_at", "expires_at",
    "status", "claimed_by_id", "claim_expires_at", "approvals_required", "approvals", "escalated_at",
    "session__title", "session__patient_ref", "session__age_band", "session__consent", "session__tainted",
    "session__care_unit", "session__client__name", "claimed_by__username",
)
CARD_RELATED = ("session__client", "claimed_by")


def card(approval, *, run_granted: list[dict] | None = None, context: dict | None = None) -> dict:
    session = approval.session
    if context is None:
        context = contexts_for([approval]).get((approval.run_id, approval.tool_call_id)) or empty_context()
    return {
        "id": str(approval.pk),
        "run_id": str(approval.run_id),
        "session": {"id": str(session.pk), "title": session.title, "patient_ref": session.patient_ref,
                    "age_band": session.age_band, "consent": session.consent, "tainted": session.tainted,
                    "care_unit": session.care_unit},
        # Why the agent asked (its own words: plain text), under which autonomy, and what tainted the session.
        **context,
        "client": {"name": session.client.name},
        "tool": approval.tool,
        "op": approval.op,
        "tool_call_id": approval.tool_call_id,
        "reason_code": approval.reason_code,
        "rule_id": approval.rule_id,
        "explanation": approval.explanation,
        "hitl_tier": approval.hitl_tier,
        # Under four eyes an edit puts new args on the table before the quorum is met (quorum.py).
        **_args(approval.approved_args if approval.approved_args is not None else approval.args),
        "payload_hash": approval.payload_hash,
        "message": approval.message or None,
        "resume_schema": approval.resume_schema,
        "requested_at": approval.requested_at.isoformat(),
        "expires_at": approval.expires_at.isoformat(),
        "status": approval.status,
        "run_granted": run_granted if run_granted is not None else granted_in_runs([approval.run_id])[approval.run_id],
        **claim_and_quorum(approval),
    }


def claim_and_quorum(approval) -> dict:
    """Who is working the card (a live claim only), how far its four eyes have got, and its escalation."""
    live = approval.claimed_by_id is not None and approval.claim_expires_at is not None \
        and approval.claim_expires_at > timezone.now()
    return {
        "claimed_by": approval.claimed_by.get_username() if live else None,
        "claim_expires_at": approval.claim_expires_at.isoformat() if live else None,
        "approvals_required": approval.approvals_required,
        "approvals": counted_approvals(approval),
        "escalated_at": approval.escalated_at.isoformat() if approval.escalated_at else None,
    }


def counted_approvals(approval) -> list[dict]:
    """The approvals that count towards the quorum: those of the payload now on the table."""
    return [{"reviewer": vote["reviewer"], "at": vote["at"], "reason": vote["reason"]}
            for vote in approval.approvals or () if vote.get("payload_hash") == approval.payload_hash]


def cards_for(approvals) -> list[dict]:
    """Cards for many approvals: one query for all their runs' grants, one for their calls' context (none per card)."""
    approvals = list(approvals)
    granted = granted_in_runs({approval.run_id for approval in approvals})
    contexts = contexts_for(approvals)
    return [card(approval, run_granted=granted[approval.run_id],
                 context=contexts.get((approval.run_id, approval.tool_call_id)) or empty_context())
            for approval in approvals]


def granted_in_runs(run_ids) -> dict:
    """run id → the grants it holds that an agent could still use: approved, unconsumed, unexpired."""
    rows = (
        Approval.objects.filter(run_id__in=list(run_ids), status=ApprovalStatus.APPROVED,
                                expires_at__gt=timezone.now())
        .select_related("decided_by").only(*_SIBLING_FIELDS).order_by("decided_at")
    )
    granted = defaultdict(list)
    for approval in rows:
        granted[approval.run_id].append(sibling(approval))
    return granted


# What sibling() reads (`.only()` for a page's grants, as CARD_FIELDS for its cards).
_SIBLING_FIELDS = ("id", "run_id", "tool", "op", "status", "decided_by_id", "decided_by__username")


def sibling(approval) -> dict:
    return {"id": str(approval.pk), "tool": approval.tool, "op": approval.op, "status": approval.status,
            "decided_by": _decided_by(approval)}


def _decided_by(approval) -> str | None:
    return approval.decided_by.get_username() if approval.decided_by_id else None


def added(approval, *, run_granted: list[dict] | None = None, context: dict | None = None) -> dict:
    return {"type": "card.added", "card": card(approval, run_granted=run_granted, context=context)}


def updated(approval) -> dict:
    """A pending card changed (claimed, released, one approval of its quorum counted)."""
    return {"type": "card.updated", "card": card(approval)}


def removed(approval) -> dict:
    # care_unit: the inbox socket drops the notice for reviewers who never saw the card (visibility.py).
    return {"type": "card.removed", "id": str(approval.pk), "status": approval.status,
            "care_unit": approval.session.care_unit,
            "decided_by": _decided_by(approval), "run_id": str(approval.run_id),
            "tool": approval.tool, "op": approval.op}
