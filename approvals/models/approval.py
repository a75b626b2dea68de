import uuid

from django.conf import settings
from django.db import models
from django_fsm import FSMField, transition


class ApprovalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    CONSUMED = "consumed"
    EXPIRED = "expired"
    # Its run was superseded, stopped or closed while the card was open (not its deadline: that is `expired`).
    WITHDRAWN = "withdrawn"


class ReasonCode(models.TextChoices):
    APPROVAL = "approval"
    CLARIFICATION = "clarification"


OPEN_STATUSES = (ApprovalStatus.PENDING, ApprovalStatus.APPROVED)

# The inbox queue's default order (inbox/static/inbox/list.js): escalated first, then high, low and
# no tier. Defined once, because the index below serves only a query that spells them the same.
ESCALATION_RANK = models.Case(
    models.When(escalated_at__isnull=False, then=models.Value(0)),
    default=models.Value(1),
    output_field=models.IntegerField(),
)
RISK_RANK = models.Case(
    models.When(hitl_tier="high", then=models.Value(0)),
    models.When(hitl_tier="low", then=models.Value(1)),
    default=models.Value(2),
    output_field=models.IntegerField(),
)


class Approval(models.Model):
    """One parked tool call (or clarification) waiting for, or carrying, a human decision.

    `payload_hash` binds the approval to the exact arguments that may run: the
    original args while pending, `approved_args` (possibly edited) once approved.
    Consuming it is a single conditional UPDATE (approvals/resume.py), so exactly
    one resume can ever win.
    """

    Status = ApprovalStatus

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: one_approval_per_suspend (run, step_id, contract_hash) leads with the
    # run and serves every lookup by run (a run's open approvals, the close's expiry, the cascade).
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="approvals", db_index=False)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="approvals")
    # The session's client, copied when the run parks (a session never changes hands): the
    # pending limit counts a client's open cards off approval_client_pending alone, not
    # through every session the client ever had. No index of its own: only a client's
    # delete (a rare admin act) looks approvals up by client alone.
    client = models.ForeignKey("agents.ApiClient", on_delete=models.CASCADE, related_name="+", db_index=False)
    # The patient context the card showed, {patient_ref, age_band, consent}, copied from the session
    # when the call parked (the suspend funnel): a resume or cold replay in a session whose context has
    # changed since is refused (approvals/bound_context.py). care_unit routes a card; it binds nothing.
    # One column, not three: the suspend's statement keeps few parameters.
    bound_context = models.JSONField(default=dict, blank=True)
    tool = models.CharField(max_length=120)
    op = models.CharField(max_length=60, blank=True)
    tool_call_id = models.CharField(max_length=120)
    step_id = models.CharField(max_length=120)
    # Suspend identity is (run, step_id, contract_hash): tool, op, args, reason
    # code and missing fields. A new reason on the same step is a new approval.
    contract_hash = models.CharField(max_length=64)
    reason_code = models.CharField(max_length=16, choices=ReasonCode.choices)
    rule_id = models.CharField(max_length=80)
    explanation = models.TextField(blank=True)
    hitl_tier = models.CharField(max_length=8, null=True, blank=True)
    message = models.TextField(blank=True)
    args = models.JSONField(default=dict)
    approved_args = models.JSONField(null=True, blank=True)
    payload_hash = models.CharField(max_length=64)
    # The args a reviewer's edit may not change, as paths ("patient_ref", "order.mrn"), worked out
    # when the call parked (approvals/locked_args.py); the card shows them read-only.
    locked_args = models.JSONField(default=list, blank=True)
    resume_schema = models.JSONField(default=dict)
    resume_data = models.JSONField(null=True, blank=True)
    status = FSMField(default=ApprovalStatus.PENDING, choices=ApprovalStatus.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decision_reason = models.TextField(blank=True)
    requested_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    consumed_at = models.DateTimeField(null=True, blank=True)
    # A reviewer working on the card (approvals/claims.py); live while claim_expires_at is ahead.
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    # Four eyes (approvals/quorum.py): copied from the tool's descriptor when the call parks,
    # so a registry edit never changes what an open card needs.
    approvals_required = models.PositiveSmallIntegerField(default=1)
    # [{reviewer, at, reason, payload_hash}]: the approvals counted so far, of the current payload.
    approvals = models.JSONField(default=list, blank=True)
    # Set once by the sweep when the card is still undecided late in its TTL (approvals/escalation.py).
    escalated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["requested_at"]
        constraints = [
            models.UniqueConstraint(fields=["run", "step_id", "contract_hash"], name="one_approval_per_suspend"),
            models.CheckConstraint(
                name="approval_known_status",
                condition=models.Q(status__in=ApprovalStatus.values),
            ),
            models.CheckConstraint(
                name="approval_quorum_1_to_3",
                condition=models.Q(approvals_required__gte=1, approvals_required__lte=3),
            ),
        ]
        indexes = [
            # Inbox snapshot and the expiry sweep: open approvals by deadline.
            models.Index(fields=["status", "expires_at"], name="approval_status_expiry"),
            # The inbox snapshot's pages (inbox/pages.py): pending cards in queue order,
            # so a page of 100 reads 100 index entries instead of sorting every pending card.
            models.Index(
                ESCALATION_RANK,
                RISK_RANK,
                models.F("expires_at"),
                models.F("id"),
                name="approval_inbox_queue",
                condition=models.Q(status="pending"),
            ),
            # The pending limit (approvals/suspend._open_cards): one client's open cards by deadline.
            models.Index(
                fields=["client", "expires_at"], name="approval_client_pending", condition=models.Q(status="pending")
            ),
            # The admin dashboard: decisions of the last 24 hours (time to decision, rejections).
            models.Index(fields=["decided_at"], name="approval_decided_at"),
            # Cold replay: an approved grant in this session for this tool and payload.
            models.Index(
                fields=["session", "tool", "payload_hash"],
                name="approval_grant_lookup",
                condition=models.Q(status="approved"),
            ),
        ]

    # Not a column: the session's audit chain head (audit/chain.py `LockedHead`) when the statement
    # that locked this approval locked the head too (approvals/locking.py, approvals/resume.py);
    # None when it did not, and an append locks the head itself.
    audit_head = None

    def __str__(self) -> str:
        return f"{self.tool} ({self.status})"

    @transition(field=status, source=ApprovalStatus.PENDING, target=ApprovalStatus.APPROVED)
    def approve(self, *, by, at, approved_args, payload_hash, expires_at, resume_data=None, reason=""):
        self.decided_by, self.decided_at = by, at
        self.approved_args, self.payload_hash = approved_args, payload_hash
        self.expires_at = expires_at
        self.resume_data = resume_data
        self.decision_reason = reason
        self.claimed_by, self.claim_expires_at = None, None  # a decision ends the claim

    @transition(field=status, source=ApprovalStatus.PENDING, target=ApprovalStatus.REJECTED)
    def reject(self, *, by, at, reason):
        self.decided_by, self.decided_at, self.decision_reason = by, at, reason
        self.claimed_by, self.claim_expires_at = None, None
