"""Locking a pending approval for a reviewer's act on it (decision, claim)."""

from django.utils import timezone

from approvals.models import Approval, ApprovalStatus
from condor.errors import ApprovalNotPending
from runs import spine


def lock_pending(approval_id):
    """(approval, its run), both locked, the run first (the lock order everywhere: session, run, approvals)."""
    run_id = Approval.objects.filter(pk=approval_id).values_list("run_id", flat=True).get()
    run = spine.lock_run(run_id)
    approval = (
        Approval.objects.select_for_update(of=("self",)).select_related("session", "decided_by", "claimed_by").get(pk=approval_id)
    )
    if approval.status != ApprovalStatus.PENDING:
        raise ApprovalNotPending(f"This approval is already {approval.status}.")
    if approval.expires_at <= timezone.now():
        raise ApprovalNotPending("This approval has expired.")
    return approval, run
