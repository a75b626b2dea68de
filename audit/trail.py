"""Writing audit rows: one function, so every entry carries the same fields and joins its chain.

Every row commits in the transaction of the change it records: call `record`
inside that change's `transaction.atomic` block, after the change's own row
locks (the chain head lock is the last one a transaction takes). There is no
best-effort variant: a change whose audit row cannot be written does not happen.

Every row names its actor: the logged-in user, the API client, or, for what
Condor does by itself, a named system actor (`SWEEP`, `SUPERSEDE`, `RUN_CLOSE`,
`command(name)`, ...). A row without one is refused.
"""

import json
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction
from django.utils import timezone

from audit import chain as audit_chain
from audit.models import AuditEvent, AuditKind
from core.rows import Write, instance

Kind = AuditKind

# Named system actors: Condor acting on its own, never a bare "system".
SWEEP = "sweep"  # the periodic sweeps (runs/sweep.py, approvals/expiry.py)
SUPERSEDE = "supersede"  # opening a run closes the session's active one
RUN_CLOSE = "run_close"  # closing a run withdraws its pending approvals
ANONYMOUS = "anonymous"  # a login attempt that did not authenticate

# Every `decision` a row may carry, for the admin's filter (fixed choices, no DISTINCT scan
# of the log). Writing a new one? Add it here so compliance can filter by it.
DECISIONS = (
    "allow",
    "blocked",
    "require_approval",  # verdict
    "suspended",  # suspend
    "approved",
    "rejected",
    "resume_schema_rejected",
    "approval_counted",  # decision
    "consumed",
    "expired",
    "withdrawn",  # consume, expiry, withdrawal
    "context_changed",
    "policy_changed",  # a consume, cold replay or decision refused (approvals/refusals.py)
    "ok",
    "error",  # result
    "completed",
    "failed",
    "aborted",  # run_close
    "tainted",  # taint
    "created",
    "updated",
    "deleted",
    "proposed",
    "confirmed",  # registry_change, review_team, account, access_grant,
    # quick_reason
    "password_set",  # account
    "claimed",
    "renewed",
    "released",
    "voided",  # claim
    "escalated",
    "email_failed",  # escalation
    "viewed",  # args_viewed
    "exported",
    "succeeded",
    "intact",
    "broken",  # export, login / login_failed, verify
    "deleted",  # session_change (and "updated", above)
)

# Why a run closed, when nobody in particular closed it.
_CLOSED_BY = {"superseded": SUPERSEDE, "sweep_idle": SWEEP, "sweep_suspend_ttl": SWEEP, "approval_expired": SWEEP}


# Fields every row written inside `tagged(...)` also carries in its data: a bulk decision's id on
# each card's own decision row, written by the single-decision service that knows nothing of bulks.
_tags: ContextVar[tuple] = ContextVar("audit_tags", default=())  # (name, value) pairs: immutable


@contextmanager
def tagged(**fields):
    """Add `fields` to the data of every audit row written in this block (this thread or task only)."""
    token = _tags.set(tuple({**dict(_tags.get()), **fields}.items()))
    try:
        yield
    finally:
        _tags.reset(token)


def command(name: str) -> str:
    """The system actor of a management command, e.g. `command:register_tool`."""
    return f"command:{name}"


def closing_actor(terminal_reason: str) -> str:
    """The system actor behind a run closed with `terminal_reason` (when no user or client closed it)."""
    return _CLOSED_BY.get(str(terminal_reason), RUN_CLOSE)


def actor_name(actor_user=None, actor_client=None, actor_system: str = "") -> str:
    if actor_user is not None:
        return f"user:{actor_user.get_username()}"
    if actor_client is not None:
        return f"client:{actor_client.name}"
    if not actor_system or actor_system == "system" or actor_system.startswith(("user:", "client:")):
        raise ValueError(
            f"An audit row needs its actor: actor_user, actor_client or a named actor_system (got {actor_system!r})."
        )
    return actor_system


def entry(
    kind: str,
    *,
    run=None,
    approval=None,
    session=None,
    actor_user=None,
    actor_client=None,
    actor_system: str = "",
    tool: str = "",
    op: str = "",
    decision: str = "",
    rule_id: str = "",
    data: dict | None = None,
) -> AuditEvent:
    """An audit row, not yet linked nor saved: `record` writes one, `record_all` many at once.

    The session, run and approval ids, the tool and op, and the patient_ref are
    taken from `approval` / `run` / `session` when given; the patient_ref is copied
    from the session as it is now, so the row keeps it if the session changes later.
    """
    actor = actor_name(actor_user, actor_client, actor_system)
    if session is None:
        # A locked run carries its session already (spine.lock_run joins it).
        session = run.session if run is not None else (approval.session if approval is not None else None)
    # Built by position (core/rows.instance): a sweep batch builds a thousand.
    return instance(
        AuditEvent,
        at=timezone.now(),
        kind=Kind(kind),  # a kind named by string must be one the log knows
        actor_user_id=actor_user.pk if actor_user is not None else None,
        actor_client_id=actor_client.pk if actor_client is not None else None,
        actor=actor,
        session_id=session.pk if session is not None else None,
        run_id=approval.run_id if approval is not None else (run.pk if run is not None else None),
        approval_id=approval.pk if approval is not None else None,
        patient_ref=session.patient_ref if session is not None else "",
        tool=tool or (approval.tool if approval is not None else ""),
        op=op or (approval.op if approval is not None else ""),
        decision=decision,
        rule_id=rule_id,
        # As the database will give it back (tuples as lists, enums as strings): the hash
        # is taken over what verify_audit will read.
        data=json.loads(json.dumps({**(data or {}), **dict(_tags.get())})),
        chain=audit_chain.chain_for(session.pk if session is not None else None),
    )


def record(
    kind: str, *, along: Sequence[Write] = (), head: audit_chain.LockedHead | None = None, **fields
) -> AuditEvent:
    """Append an audit row (`entry`'s fields) inside the caller's transaction (or its own, outside one).

    `along`: the caller's own writes (core.rows.Write), sent in the same statement as the row.
    `head`: its chain's head, if the caller's transaction locked it already (audit/chain.py `append_linked`).
    """
    event = entry(kind, **fields)
    # savepoint=False: inside the caller's transaction this adds no SAVEPOINT round trips.
    with transaction.atomic(savepoint=False):
        return audit_chain.append(event, along=along, head=head)


def record_entries(
    events: Sequence[AuditEvent], *, along: Sequence[Write] = (), head: audit_chain.LockedHead | None = None
) -> list[AuditEvent]:
    """Append one or two `entry` rows of one chain, in order, in one statement with `along`
    (inside the caller's transaction, or its own outside one); `head` as for `record`."""
    with transaction.atomic(savepoint=False):
        return audit_chain.append_linked(events, along=along, head=head)


def record_all(events: list[AuditEvent]) -> list[AuditEvent]:
    """Append many `entry` rows with set-based statements, inside the caller's transaction."""
    return audit_chain.append_many(events)
