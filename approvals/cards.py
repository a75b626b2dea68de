"""The reviewer's view of an approval: the card pushed to the inbox and its removal notice."""

from django.conf import settings

from approvals.hashing import canonical_json


def _args(args) -> dict:
    """The args, whole up to CONDOR_CARD_ARGS_MAX_BYTES of canonical JSON; past it, a marked preview.

    A cut card carries no `args` at all (only the start of their canonical text, to
    read), so nothing can approve or edit it until the full args are fetched from
    the approval itself: what the reviewer approves is always what they were shown.
    """
    text = canonical_json(args)
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


def card(approval) -> dict:
    session = approval.session
    return {
        "id": str(approval.pk),
        "run_id": str(approval.run_id),
        "session": {"id": str(session.pk), "title": session.title, "patient_ref": session.patient_ref},
        "client": {"name": session.client.name},
        "tool": approval.tool,
        "op": approval.op,
        "tool_call_id": approval.tool_call_id,
        "reason_code": approval.reason_code,
        "rule_id": approval.rule_id,
        "explanation": approval.explanation,
        "hitl_tier": approval.hitl_tier,
        **_args(approval.args),
        "payload_hash": approval.payload_hash,
        "message": approval.message or None,
        "resume_schema": approval.resume_schema,
        "requested_at": approval.requested_at.isoformat(),
        "expires_at": approval.expires_at.isoformat(),
        "status": approval.status,
    }


def added(approval) -> dict:
    return {"type": "card.added", "card": card(approval)}


def removed(approval) -> dict:
    decided_by = approval.decided_by.get_username() if approval.decided_by_id else None
    return {"type": "card.removed", "id": str(approval.pk), "status": approval.status, "decided_by": decided_by}
