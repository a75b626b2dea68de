import uuid

from django.db import models
from django_fsm import GET_STATE, FSMField, FSMModelMixin, transition

from runs.states import (
    ACTIVE_STATES,
    TERMINAL_STATE_FOR_REASON,
    TERMINAL_STATES,
    RunState,
    TerminalReason,
)


class Run(FSMModelMixin, models.Model):
    """One turn of a session: a durable state machine the agent drives and a human may park."""

    State = RunState

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="runs")
    # protected: the state only moves through the transition methods below, which
    # the service functions in runs/spine.py call under a row lock.
    state = FSMField(default=RunState.PENDING, choices=[(s.value, s.value) for s in RunState], protected=True)
    terminal_reason = models.CharField(max_length=32, blank=True, choices=[(r.value, r.value) for r in TerminalReason])
    autonomy = models.CharField(max_length=16)
    flow_key = models.CharField(max_length=120, blank=True)
    engine = models.CharField(max_length=120, blank=True)
    summary = models.TextField(blank=True)
    usage = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField()
    # When the run last parked: set by the suspend that moves it to suspended, cleared when it
    # unparks. The suspend TTL counts from here, whatever calls the parked run receives meanwhile.
    suspended_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the run last parked (null while it is not suspended): the suspend TTL counts from here.",
    )
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session"],
                condition=models.Q(state__in=[s.value for s in ACTIVE_STATES]),
                name="one_active_run_per_session",
            ),
            models.CheckConstraint(
                name="terminal_run_has_reason",
                condition=models.Q(state__in=[s.value for s in ACTIVE_STATES], terminal_reason="")
                | (~models.Q(state__in=[s.value for s in ACTIVE_STATES]) & ~models.Q(terminal_reason="")),
            ),
            models.CheckConstraint(
                name="suspended_run_has_suspended_at",
                condition=~models.Q(state=RunState.SUSPENDED.value) | models.Q(suspended_at__isnull=False),
            ),
        ]
        indexes = [
            # The idle sweep: active runs ordered by last touch.
            models.Index(fields=["state", "last_activity_at"], name="run_state_activity"),
            # The suspend-TTL sweep: parked runs by when they parked.
            models.Index(
                fields=["suspended_at"], name="run_suspended_since", condition=models.Q(state=RunState.SUSPENDED.value)
            ),
        ]

    # Not a column: the session's audit chain head (audit/chain.py `LockedHead`) when the statement
    # that locked this run locked the head too (approvals/gate.py), for the transaction's appends to
    # link to; None when it did not, and an append locks the head itself.
    audit_head = None

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.state})"

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE_STATES

    @transition(field=state, source=RunState.PENDING, target=RunState.PLANNING)
    def plan(self):
        pass

    @transition(field=state, source=[RunState.PENDING, RunState.PLANNING], target=RunState.EXECUTING)
    def execute(self):
        pass

    @transition(field=state, source=RunState.EXECUTING, target=RunState.SUSPENDED)
    def suspend(self):
        pass

    @transition(field=state, source=RunState.SUSPENDED, target=RunState.EXECUTING)
    def resume(self):
        pass

    @transition(
        field=state,
        source=[s.value for s in ACTIVE_STATES],
        target=GET_STATE(lambda self, reason: TERMINAL_STATE_FOR_REASON[reason], states=list(TERMINAL_STATES)),
    )
    def close(self, reason: TerminalReason):
        self.terminal_reason = reason


class RunEvent(models.Model):
    """The outbox: one row per fact about a run, written in the transaction that made it true.

    `frames` are the AI SDK chunks the run stream replays; `inbox` is the message
    the reviewers' inbox receives. Publishing happens after commit (runs/publish.py);
    `published_at` stays null until the push went out, or, when nobody listened, until
    the drainer marked it, so the drainer can re-publish what a crash or a channel-layer
    outage missed. Consumers de-duplicate by `id`.
    """

    id = models.BigAutoField(primary_key=True)
    # No index of its own: runevent_run_seq (run, id) leads with the run and serves every
    # lookup by run (the stream replay, the cascade); a second index only cost each INSERT.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events", db_index=False)
    kind = models.CharField(max_length=40)
    step_id = models.CharField(max_length=120, blank=True)
    data = models.JSONField(default=dict, blank=True)
    frames = models.JSONField(default=list, blank=True)
    inbox = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # Stream replay: a run's events in order, from a Last-Event-ID on.
            models.Index(fields=["run", "id"], name="runevent_run_seq"),
            # The drainer: what has not been published yet.
            models.Index(fields=["id"], name="runevent_unpublished", condition=models.Q(published_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk}"


class RunDispatch(models.Model):
    """Telemetry: one row per run, written when it closes (runs/telemetry.py).

    Best-effort by design: the write sits in a savepoint, so a failure here loses
    the row, never the close. Evidence for per-flow cost and cut-over decisions.
    """

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="dispatch")
    session_id = models.UUIDField()
    engine = models.CharField(max_length=120, blank=True)
    flow_key = models.CharField(max_length=120, blank=True)
    model = models.CharField(max_length=120, blank=True)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    latency_ms = models.BigIntegerField(default=0)
    outcome = models.CharField(max_length=32, help_text="The run's terminal reason.")
    state = models.CharField(max_length=16, help_text="The run's terminal state.")
    recorded_at = models.DateTimeField()

    class Meta:
        indexes = [
            # usage-rollup: one session's rows.
            models.Index(fields=["session_id"], name="dispatch_session"),
            # The per-flow split over a time window.
            models.Index(fields=["recorded_at", "flow_key"], name="dispatch_recent_flow"),
        ]

    def __str__(self) -> str:
        return f"{self.flow_key or '-'} {self.outcome}"


class Heartbeat(models.Model):
    """When a periodic job last finished: one row per job, overwritten each time.

    The admin dashboard reads it (today: `sweep`, written by runs/sweep.py). Not an
    audit record: only the latest beat is kept.
    """

    name = models.CharField(max_length=40, primary_key=True)
    at = models.DateTimeField()
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "approvals_heartbeat"  # the table it had before the layout move

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"
