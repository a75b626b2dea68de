"""Locking a pending approval for a reviewer's act on it (decision, claim)."""

from collections.abc import Callable

from django.contrib.auth.models import User
from django.utils import timezone

from approvals.models import Approval, ApprovalStatus
from audit import chain as audit_chain
from core.errors import ApprovalNotPending, NotFound
from core.rows import column, columns, db_value, first_row, kept, reader, table
from registry import cache as registry_cache
from runs import spine
from sessions_app.models import Session

# The approval's relations read with it, as select_related would: the session (never null), then
# whoever decided and whoever claimed it (either may be null), each a block of its model's columns.
_RELATED = (("session", Session), ("decided_by", User), ("claimed_by", User))


def lock_pending(approval_id, *, touch: bool = False, visible: Callable[[Approval], bool] | None = None):
    """(approval, its run), both locked, the run first (the lock order everywhere: session, run, approvals).

    `touch`: the run's lock records activity too (a decision counts as activity on
    the run), in the same statement, which finds the run from the approval's id.
    `visible`: whether the acting reviewer may see the approval (its session loaded);
    one they may not is 404 before anything else is said of it, and the caller's
    transaction rolls the touch back.
    """
    if touch:
        # An approval's run never changes, so reading it inside the locking statement is safe.
        run = spine.lock_touched_run(
            None,
            id_sql=(
                f"SELECT {column(Approval, 'run')} FROM {table(Approval)} WHERE {column(Approval, 'id')} = %s",
                [db_value(Approval, "id", approval_id)],
            ),
        )
        if run is None:
            raise NotFound("No such approval.")
    else:
        run_id = Approval.objects.filter(pk=approval_id).values_list("run_id", flat=True).first()
        if run_id is None:
            raise NotFound("No such approval.")
        run = spine.lock_run(run_id)
    approval = _locked_approval(approval_id)
    if approval is None:
        raise NotFound("No such approval.")
    # Read after the run's lock was granted: the session as it is now.
    run.session = approval.session
    if visible is not None and not visible(approval):
        raise NotFound("No such approval.")
    if approval.status != ApprovalStatus.PENDING:
        raise ApprovalNotPending(f"This approval is already {approval.status}.")
    if approval.expires_at <= timezone.now():
        raise ApprovalNotPending("This approval has expired.")
    return approval, run


def _locked_approval(approval_id) -> Approval | None:
    """The approval, locked (not its relations), with its session, decider and claimant loaded, the
    registry's stamp as `registry_stamp` (registry/cache.py: the tool's row in force, no read of its own)
    and, on PostgreSQL, its session's audit chain head, locked after it, as `audit_head` (audit/chain.py).

    Written out rather than through `select_for_update().select_related(...)`: the ORM
    compiles that three-join query afresh for every decision, at more CPU than the rest
    of the decision's statements together.
    """
    row = first_row(kept("lock-pending", _locked_approval_sql, model=Approval), [db_value(Approval, "id", approval_id)])
    if row is None:
        return None
    at = len(Approval._meta.concrete_fields)
    approval = reader(Approval)(row[:at])
    for name, model in _RELATED:
        width = len(model._meta.concrete_fields)
        values, at = row[at : at + width], at + width
        related = reader(model)(values) if values[0] is not None else None
        Approval._meta.get_field(name).set_cached_value(approval, related)
    approval.registry_stamp = row[at]
    approval.audit_head = audit_chain.locked_head(row[at + 1 :])
    return approval


def _locked_approval_sql(db) -> str:
    postgresql = db.vendor == "postgresql"
    # On PostgreSQL the approval is locked first, alone (the CTE: only the approval, as
    # select_for_update's of=("self",)), then the head through a LATERAL join on the locked row:
    # the order every writer keeps. MATERIALIZED: the CTE is run as written, never folded in.
    approvals = "locked" if postgresql else table(Approval, db=db)
    selected, joins = [columns(Approval, table=approvals, db=db)], []
    for index, (name, model) in enumerate(_RELATED):
        alias, join = f"r{index}", "INNER" if name == "session" else "LEFT OUTER"
        selected.append(columns(model, table=alias, db=db))
        joins.append(
            f"{join} JOIN {table(model, db=db)} AS {alias} ON "
            f"({column(Approval, name, approvals, db=db)} = {column(model, model._meta.pk.name, alias, db=db)})"
        )
    selected.append(f"({registry_cache.stamp_sql()})")
    if not postgresql:  # SQLite's transaction holds the whole database: no row locks
        return (
            f"SELECT {', '.join(selected)} FROM {approvals} {' '.join(joins)} "
            f"WHERE {column(Approval, 'id', approvals, db=db)} = %s"
        )
    head_columns, head_join = audit_chain.locked_head_join(
        db, audit_chain.session_chain_sql(column(Approval, "session", approvals, db=db))
    )
    return (
        f"WITH locked AS MATERIALIZED (SELECT * FROM {table(Approval, db=db)} "
        f"WHERE {column(Approval, 'id', db=db)} = %s FOR UPDATE) "
        f"SELECT {', '.join([*selected, head_columns])} FROM locked {' '.join(joins)} {head_join}"
    )
