"""Locking a pending approval for a reviewer's act on it (decision, claim)."""

from collections.abc import Callable

from django.contrib.auth.models import User
from django.utils import timezone

from approvals.models import Approval, ApprovalStatus
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
    """The approval, locked (not its relations), with its session, decider and claimant loaded, and
    the registry's stamp as `registry_stamp` (registry/cache.py: the tool's row in force, no read of its own).

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
    return approval


def _locked_approval_sql(db) -> str:
    approvals = table(Approval, db=db)
    selected, joins = [columns(Approval, db=db)], []
    for index, (name, model) in enumerate(_RELATED):
        alias, join = f"r{index}", "INNER" if name == "session" else "LEFT OUTER"
        selected.append(columns(model, table=alias, db=db))
        joins.append(
            f"{join} JOIN {table(model, db=db)} AS {alias} ON "
            f"({column(Approval, name, approvals, db=db)} = {column(model, model._meta.pk.name, alias, db=db)})"
        )
    # Only the approval is locked (select_for_update's of=("self",)); SQLite's transaction holds it all anyway.
    lock = f" FOR UPDATE OF {approvals}" if db.vendor == "postgresql" else ""
    return (
        f"SELECT {', '.join(selected)}, ({registry_cache.stamp_sql()}) FROM {approvals} {' '.join(joins)} "
        f"WHERE {column(Approval, 'id', approvals, db=db)} = %s{lock}"
    )
