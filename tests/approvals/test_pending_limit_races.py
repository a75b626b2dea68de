"""The pending limit under contention, on real PostgreSQL (issue 9 item 2, issue 11).

The approval's INSERT counts the client's open cards in the same statement
(approvals/suspend.py), after the run lock: of several calls parking on one run at
once with room for one more card, exactly one parks, the others are refused with
`too_many_pending`, and none of theirs leaves a row behind.
"""

from functools import partial

import pytest

from approvals.gate import GateCall, gate_tool_call
from approvals.models import Approval, ApprovalStatus, ToolCall
from audit.models import AuditEvent
from core.errors import CondorError
from runs.models import RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, suspend
from tests.helpers.races import all_at_once
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

THREADS = 8


def park_attempt(run_id, client, n: int):
    call = GateCall(
        tool_call_id=f"call-{n}",
        step_id=f"step-{n}",
        tool="prescribe_medication",
        op="create",
        args={**PRESCRIPTION, "days": n},
        metadata={},
    )
    return gate_tool_call(run_id, call, client=client).status


@pytest.mark.parametrize("round_", range(5))
def test_of_concurrent_suspends_with_room_for_one_exactly_one_parks(api, ward_agent, settings, round_):
    settings.CONDOR_MAX_PENDING_PER_CLIENT = 2
    run_id = open_executing_run(api)
    suspend(api, run_id, step_id="step-0", tool_call_id="call-0")  # one card open: room for one more

    outcomes = all_at_once([partial(park_attempt, run_id, ward_agent, n) for n in range(1, THREADS + 1)])

    codes = [outcome.code if isinstance(outcome, CondorError) else outcome for outcome in outcomes]
    assert sorted(codes, key=str) == [202] + ["too_many_pending"] * (THREADS - 1), outcomes
    assert Approval.objects.filter(status=ApprovalStatus.PENDING).count() == 2
    assert ToolCall.objects.count() == 2
    assert RunEvent.objects.filter(run_id=run_id, kind="approval.suspended").count() == 2
    assert AuditEvent.objects.filter(kind=AuditEvent.Kind.SUSPEND).count() == 2
