"""Locking a pending approval for a reviewer's act on it (decision, claim)."""

from collections.abc import Callable

from django.utils import timezone

from approvals.models import Approval, ApprovalStatus
from core.errors import ApprovalNotPending, NotFound
from core.rows import column, db_value, table
from runs import spine


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
    approval = (
        Approval.objects.select_for_update(of=("self",))
        .select_related("session", "decided_by", "claimed_by")
        .filter(pk=approval_id)
        .first()
    )
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
