"""A sweep batch closes ClosingRun rows (a values read, not models): each closes as a Run would."""

import itertools

import pytest
from django_fsm import TransitionNotAllowed

from runs.closing import ClosingRun
from runs.models import Run
from runs.states import RunState, TerminalReason


def _closed(run, reason):
    try:
        run.close(reason)
    except TransitionNotAllowed:
        return "refused"
    return str(run.state), str(run.terminal_reason)


@pytest.mark.parametrize(("state", "reason"), list(itertools.product(RunState, TerminalReason)))
def test_a_closing_row_takes_the_edge_the_run_fsm_takes(state, reason):
    row = ClosingRun("run-1", "session-1", "MRN-1", state.value, "", "", {}, None)

    assert _closed(row, reason) == _closed(Run(state=state), reason)
