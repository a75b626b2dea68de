"""The admin index dashboard: what is waiting, how fast people decide, what the gate hits.

Every query is bounded: the pending set (index approval_status_expiry), the last 24 h
of decisions (index approval_decided_at), the last 24 h of audit rows (the index on
AuditEvent.at) and the newest chain verification (one row of the audit index on
kind, newest first). Nothing here counts or scans the whole audit table.
"""

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, F, Q
from django.utils import timezone

from approvals.escalation import EMAIL_FAILED
from approvals.models import Approval, ApprovalStatus, ReviewTeam
from audit.models import AuditEvent
from registry.models import ToolChange, ToolChangeStatus
from runs import heartbeats
from runs.models import Heartbeat

WINDOW = timedelta(hours=24)
# What each count of the sweep's heartbeat means (runs/sweep.py names them), in pass order.
SWEEP_COUNTS = {
    "approvals_expired": "approvals expired",
    "runs_approval_expired": "runs closed, approvals all expired",
    "runs_suspend_ttl": "runs closed, suspended too long",
    "runs_idle": "runs closed, idle",
    "events_republished": "events re-published",
    "idempotency_pruned": "idempotency keys pruned",
}
TOP_RULES = 8
# verify_audit and the audit admin's verification action each write an audit row of this
# kind (AuditKind.VERIFY): the log itself says when it was verified.
VERIFY_KIND = "verify"


@dataclass(frozen=True)
class Dashboard:
    now: datetime
    pending_now: int
    # Review teams exist, none is the default, and these pending cards' units no team lists:
    # every reviewer sees them (SPEC section 10). None when routing is off (no team at all).
    unrouted_pending: int | None
    oldest_pending_at: datetime | None
    oldest_pending_id: object
    decisions_24h: int
    median_time_to_decision: timedelta | None
    p90_time_to_decision: timedelta | None
    expiries_24h: int
    escalation_emails_failed_24h: int  # escalations whose e-mail did not leave (approvals/escalation.py)
    # Cards whose run was superseded, stopped or closed while they were open: not expiries (SPEC 4).
    withdrawals_24h: int
    rejections_24h: int
    top_rule_ids: list[tuple[str, int]]
    pending_registry_changes: int
    sweep: Heartbeat | None
    chains_verified: dict | None  # {"at", "decision" ("intact" / "broken"), "actor"} of the newest check

    @property
    def oldest_pending_age(self) -> timedelta | None:
        return self.now - self.oldest_pending_at if self.oldest_pending_at else None

    @property
    def sweep_age(self) -> timedelta | None:
        return self.now - self.sweep.at if self.sweep else None

    @property
    def sweep_took(self) -> float | None:
        """Seconds the last pass ran (None for a heartbeat written before passes were timed)."""
        return self.sweep.details.get("seconds") if self.sweep else None

    @property
    def sweep_counts(self) -> list[tuple[str, int | None]]:
        """The last pass's counts as (label, count); None where that step failed (the sweep stores -1)."""
        details = self.sweep.details if self.sweep else {}
        return [
            (label, None if details[name] < 0 else details[name])
            for name, label in SWEEP_COUNTS.items()
            if name in details
        ]


def _percentile(waits, count: int, fraction: float) -> timedelta | None:
    """Nearest-rank percentile of an ordered queryset of durations, read as one row."""
    if not count:
        return None
    return waits[max(math.ceil(fraction * count) - 1, 0)]


def _unrouted(pending) -> int | None:
    teams = list(ReviewTeam.objects.values_list("care_units", "is_default"))
    if not teams:
        return None
    if any(is_default for _, is_default in teams):
        return 0  # the default team takes them
    listed = {unit for units, _ in teams for unit in units}
    return pending.exclude(session__care_unit__in=listed).count()


def dashboard(now: datetime | None = None) -> Dashboard:
    now = now or timezone.now()
    since = now - WINDOW
    # Past its deadline a card waits for nobody, swept or not (SPEC 4: expiry never waits on the sweep).
    pending = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__gt=now)
    oldest = pending.order_by("requested_at").values_list("requested_at", "id").first()
    # A decision is a person's (decided_by set): an expiry stamps decided_at but nobody decided.
    decided = Approval.objects.filter(decided_at__gte=since, decided_by__isnull=False)
    decisions = decided.count()
    waits = decided.annotate(wait=F("decided_at") - F("requested_at")).order_by("wait").values_list("wait", flat=True)
    recent_audit = AuditEvent.objects.filter(at__gte=since)
    # One pass over the window's rows: closed without a decision, by their deadline or with their
    # run (SPEC 4), and escalations whose e-mail did not leave.
    counted = recent_audit.aggregate(
        expiries=Count("id", filter=Q(kind=AuditEvent.Kind.EXPIRY)),
        withdrawals=Count("id", filter=Q(kind=AuditEvent.Kind.WITHDRAWAL)),
        escalation_emails_failed=Count("id", filter=Q(kind=AuditEvent.Kind.ESCALATION, decision=EMAIL_FAILED)),
    )
    top = (
        recent_audit.filter(kind=AuditEvent.Kind.VERDICT)
        .exclude(rule_id="")
        .values("rule_id")
        .annotate(hits=Count("id"))
        .order_by("-hits", "rule_id")[:TOP_RULES]
    )
    return Dashboard(
        now=now,
        pending_now=pending.count(),
        unrouted_pending=_unrouted(pending),
        oldest_pending_at=oldest[0] if oldest else None,
        oldest_pending_id=oldest[1] if oldest else None,
        decisions_24h=decisions,
        median_time_to_decision=_percentile(waits, decisions, 0.5),
        p90_time_to_decision=_percentile(waits, decisions, 0.9),
        expiries_24h=counted["expiries"],
        escalation_emails_failed_24h=counted["escalation_emails_failed"],
        withdrawals_24h=counted["withdrawals"],
        rejections_24h=decided.filter(status=ApprovalStatus.REJECTED).count(),
        top_rule_ids=[(row["rule_id"], row["hits"]) for row in top],
        pending_registry_changes=ToolChange.objects.filter(status=ToolChangeStatus.PENDING).count(),
        sweep=heartbeats.last(heartbeats.SWEEP),
        chains_verified=AuditEvent.objects.filter(kind=VERIFY_KIND)
        .order_by("-id")
        .values("at", "decision", "actor")
        .first(),
    )
