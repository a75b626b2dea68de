"""A run about to be closed, as a sweep batch reads it: a few columns, not a model instance.

`spine.close_locked` closes Run instances (a request's run, a batch of one) and
these alike: it reads the same attributes from both. A sweep batch locks a thousand
runs; as Run and Session instances (select_related) they cost more Python than the
rest of the batch's close, as a values read a fifth of that (bench/README.md).
"""

from typing import NamedTuple

from django_fsm import TransitionNotAllowed

from runs.states import ACTIVE_STATES, TERMINAL_STATE_FOR_REASON, TerminalReason


class SessionRef(NamedTuple):
    """What a close's audit row takes from the run's session (audit.entry reads `run.session`)."""

    pk: object
    patient_ref: str


class ClosingRun:
    """One locked active run, from `COLUMNS` (a `values_list` under the row lock), for `spine.close_locked`."""

    COLUMNS = ("pk", "session_id", "session__patient_ref", "state", "engine", "flow_key", "usage", "created_at")

    __slots__ = (
        "pk",
        "session_id",
        "session",
        "state",
        "engine",
        "flow_key",
        "usage",
        "created_at",
        "terminal_reason",
        "closed_at",
        "last_activity_at",
        "summary",
    )

    def __init__(self, pk, session_id, patient_ref, state, engine, flow_key, usage, created_at):
        self.pk, self.session_id, self.session = pk, session_id, SessionRef(session_id, patient_ref)
        self.state, self.engine, self.flow_key, self.usage, self.created_at = state, engine, flow_key, usage, created_at
        self.terminal_reason, self.closed_at, self.last_activity_at, self.summary = "", None, None, ""

    def close(self, reason: TerminalReason) -> None:
        """Run.close's edge, taken as its FSM takes it: from any active state to the reason's terminal state.

        tests/runs/test_closing.py holds the two equal for every state and reason.
        """
        if self.state not in ACTIVE_STATES:
            raise TransitionNotAllowed(f"Can't switch from state '{self.state}' using method 'close'")
        self.state, self.terminal_reason = TERMINAL_STATE_FOR_REASON[reason], reason
