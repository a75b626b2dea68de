"""The reviewer's view of an approval: the card pushed to the inbox and its removal notice."""


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
        "args": approval.args,
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
