"""The audit log: append-only rows, each link of a SHA-256 hash chain (see audit/chain.py).

The database refuses UPDATE, DELETE and TRUNCATE on the table (statement-level
triggers installed by migration 0006, which no session switch turns off), and in
production the application's database role holds only INSERT and SELECT on it
(`manage.py grant_app_role`). What gets past both (the table owner disabling the
triggers, a superuser's `session_replication_role = replica`) is caught by `manage.py
verify_audit`, and at a chain's newest rows by its checkpoints (audit/checkpoints.py).
"""

from django.conf import settings
from django.db import models

GENESIS_HASH = "0" * 64  # the "previous hash" of every chain's first row
GLOBAL_CHAIN = "global"  # registry changes, logins, exports, verifications: rows without a session


class AuditKind(models.TextChoices):
    VERDICT = "verdict"
    SUSPEND = "suspend"
    DECISION = "decision"
    CONSUME = "consume"
    RESULT = "result"
    EXPIRY = "expiry"
    WITHDRAWAL = "withdrawal"
    RUN_CLOSE = "run_close"
    TAINT = "taint"
    REGISTRY_CHANGE = "registry_change"
    EXPORT = "export", "Admin export"
    LOGIN = "login"
    LOGIN_FAILED = "login_failed", "Failed login"
    VERIFY = "verify", "Chain verification"
    SESSION_CHANGE = "session_change", "Session change"
    CLAIM = "claim", "Claim on an approval"
    REVIEW_TEAM = "review_team", "Review team change"
    ESCALATION = "escalation"
    API_CLIENT = "api_client", "API client or key change"
    ARGS_VIEWED = "args_viewed", "Full arguments viewed"
    ACCOUNT = "account", "Account, group or permission change"
    ACCESS_GRANT = "access_grant", "Governance or superuser grant"
    QUICK_REASON = "quick_reason", "Quick rejection reason change"


class AuditEvent(models.Model):
    """Who did what, for which patient, when, under which rule: one row per event, never changed."""

    Kind = AuditKind

    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField()
    kind = models.CharField(max_length=24, choices=AuditKind.choices)
    # Who acted: a logged-in user (reviewer, admin), an API client, or a named part of
    # Condor itself (`sweep`, `supersede`, `command:register_tool`); `actor` is the
    # display name at the time ("user:gina", "client:ward-agent", "sweep").
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_client = models.ForeignKey(
        "agents.ApiClient", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor = models.CharField(max_length=160, help_text="Display name of the actor at the time.")
    # Plain ids, not foreign keys: the record outlives a deleted session.
    session_id = models.UUIDField(null=True, blank=True)
    run_id = models.UUIDField(null=True, blank=True)
    approval_id = models.UUIDField(null=True, blank=True)
    patient_ref = models.CharField(max_length=120, blank=True, help_text="The session's patient at the time.")
    tool = models.CharField(max_length=120, blank=True)
    op = models.CharField(max_length=60, blank=True)
    decision = models.CharField(max_length=32, blank=True)
    rule_id = models.CharField(max_length=80, blank=True)
    data = models.JSONField("details", default=dict, blank=True)
    # The chain: one per session, plus GLOBAL_CHAIN. `seq` counts from 1 within it;
    # `hash` = SHA-256 over `prev_hash`, `seq` and the SHA-256 of the RFC 8785 form of the
    # row's other content (rows of the first version: of everything at once; audit/chain.py `v1_hash`).
    chain = models.CharField(max_length=48)
    seq = models.BigIntegerField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        db_table = "approvals_auditevent"  # the table it had before the layout move
        ordering = ["-id"]
        constraints = [
            # One row per position: two appends that raced past the chain head lock
            # could not both commit. Also serves verify_audit's "is seq N there?".
            models.UniqueConstraint(fields=["chain", "seq"], name="audit_chain_seq_unique"),
        ]
        indexes = [
            # The admin's filters, newest first: WHERE <column> = %s ORDER BY id DESC LIMIT 100,
            # read in index order with no sort. Also the exact-match search on each column.
            models.Index(fields=["kind", "-id"], name="audit_kind_recent"),
            models.Index(fields=["rule_id", "-id"], name="audit_rule_recent"),
            models.Index(fields=["decision", "-id"], name="audit_decision_recent"),
            models.Index(fields=["tool", "-id"], name="audit_tool_recent"),
            models.Index(fields=["actor", "-id"], name="audit_actor_recent"),
            models.Index(fields=["patient_ref", "-id"], name="audit_patient_recent"),
            # "Everything about this run / approval / session": the admin's links from
            # those pages and the UUID search.
            models.Index(fields=["run_id", "id"], name="audit_run"),
            models.Index(fields=["approval_id", "id"], name="audit_approval"),
            models.Index(fields=["session_id", "id"], name="audit_session"),
            # The admin's date-range filter: WHERE at >= %s AND at < %s.
            models.Index(fields=["at"], name="audit_at"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.tool or ''} {self.decision or ''}".strip()


class AuditChainHead(models.Model):
    """The last link of each chain. Appending locks this row (last, after every other lock).

    The database lets it only advance by one link or two an UPDATE (migrations 0006 and 0017),
    and never be deleted.
    """

    chain = models.CharField(max_length=48, primary_key=True)
    seq = models.BigIntegerField(default=0)
    hash = models.CharField(max_length=64, default=GENESIS_HASH)
    # The hash the head had before its last move: an append's UPDATE sets it so that its
    # RETURNING (new values only) hands the first row it links its `prev_hash` (audit/chain.py).
    prev_hash = models.CharField(max_length=64, default=GENESIS_HASH, db_default=GENESIS_HASH)

    class Meta:
        db_table = "approvals_auditchainhead"  # the table it had before the layout move

    def __str__(self) -> str:
        return f"{self.chain} @ {self.seq}"
