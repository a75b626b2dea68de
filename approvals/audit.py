"""Writing audit rows: one function, so every entry carries the same fields."""

import logging

from approvals.models.audit import AuditEvent, AuditKind

logger = logging.getLogger(__name__)
Kind = AuditKind


def _actor_name(actor_user, actor_client) -> str:
    if actor_user is not None:
        return f"user:{actor_user.get_username()}"
    if actor_client is not None:
        return f"client:{actor_client.name}"
    return "system"


def record(kind: str, *, run=None, approval=None, actor_user=None, actor_client=None,
           tool: str = "", decision: str = "", rule_id: str = "", data: dict | None = None) -> AuditEvent:
    """Append an audit row inside the caller's transaction."""
    session_id = None
    if approval is not None:
        session_id = approval.session_id
    elif run is not None:
        session_id = run.session_id
    return AuditEvent.objects.create(
        kind=kind,
        actor_user=actor_user,
        actor_client=actor_client,
        actor=_actor_name(actor_user, actor_client),
        session_id=session_id,
        run_id=approval.run_id if approval is not None else (run.pk if run is not None else None),
        approval_id=approval.pk if approval is not None else None,
        tool=tool or (approval.tool if approval is not None else ""),
        decision=decision,
        rule_id=rule_id,
        data=data or {},
    )


def record_best_effort(kind: str, **fields) -> AuditEvent | None:
    """Append an audit row after a durable write; a failure is logged, never raised."""
    try:
        return record(kind, **fields)
    except Exception:
        logger.exception("audit write failed for %s (the durable change stands)", kind)
        return None
