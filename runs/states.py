"""The run state machine's vocabulary: states, terminal reasons and their mapping.

Kept free of Django so the edge table can be read (and tested) on its own.
"""

from enum import StrEnum


class RunState(StrEnum):
    PENDING = "pending"
    PLANNING = "planning"
    EXECUTING = "executing"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"


ACTIVE_STATES = (RunState.PENDING, RunState.PLANNING, RunState.EXECUTING, RunState.SUSPENDED)
TERMINAL_STATES = (RunState.COMPLETED, RunState.FAILED, RunState.ABORTED)


class TerminalReason(StrEnum):
    COMPLETED = "completed"
    DIRECT_ANSWER = "direct_answer"
    ERROR = "error"
    DEGRADED_PARTIAL = "degraded_partial"
    TOOL_ERROR = "tool_error"
    RESUME_SCHEMA_REJECTED = "resume_schema_rejected"
    TIMEOUT = "timeout"
    APPROVAL_DENIED = "approval_denied"
    USER_STOPPED = "user_stopped"
    SWEEP_IDLE = "sweep_idle"
    SWEEP_SUSPEND_TTL = "sweep_suspend_ttl"
    APPROVAL_EXPIRED = "approval_expired"
    SUPERSEDED = "superseded"


# The one table collapsing 13 reasons onto 3 terminal states: read the reason
# for *why* a run ended, the state for *whether* it succeeded.
TERMINAL_STATE_FOR_REASON: dict[TerminalReason, RunState] = {
    TerminalReason.COMPLETED: RunState.COMPLETED,
    TerminalReason.DIRECT_ANSWER: RunState.COMPLETED,
    TerminalReason.ERROR: RunState.FAILED,
    TerminalReason.DEGRADED_PARTIAL: RunState.FAILED,
    TerminalReason.TOOL_ERROR: RunState.FAILED,
    TerminalReason.RESUME_SCHEMA_REJECTED: RunState.FAILED,
    TerminalReason.TIMEOUT: RunState.FAILED,
    TerminalReason.APPROVAL_DENIED: RunState.ABORTED,
    TerminalReason.USER_STOPPED: RunState.ABORTED,
    TerminalReason.SWEEP_IDLE: RunState.ABORTED,
    TerminalReason.SWEEP_SUSPEND_TTL: RunState.ABORTED,
    TerminalReason.APPROVAL_EXPIRED: RunState.ABORTED,
    TerminalReason.SUPERSEDED: RunState.ABORTED,
}

# Edges a client may ask for with POST runs/{id}/transition/. Entering or leaving
# `suspended` is never a plain transition: only the suspend funnel parks a run,
# and only a resume, a decision, a close or a sweep may unpark it.
CLIENT_TRANSITIONS: dict[RunState, tuple[RunState, ...]] = {
    RunState.PENDING: (RunState.PLANNING, RunState.EXECUTING),
    RunState.PLANNING: (RunState.EXECUTING,),
}

# The choice sets several serializers share, named once in the OpenAPI schema
# (settings SPECTACULAR_SETTINGS ENUM_NAME_OVERRIDES).
RUN_STATES = [state.value for state in RunState]
TERMINAL_REASONS = [reason.value for reason in TerminalReason]
