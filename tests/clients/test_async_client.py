"""AsyncCondor mirrors Condor: the same answers from the same live server, awaited.

Each test runs its agent with asyncio.run and checks the database afterwards
(the ORM is not for an event loop).
"""

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.expiry import expire_due
from approvals.models import ToolCall
from runs.models import Run
from tests.clients.conftest import approve_all

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

PRESCRIPTION = {"patient_ref": "MRN-7", "drug": "amoxicillin", "dose_mg": 500}
EDITED = {"patient_ref": "MRN-7", "drug": "amoxicillin", "dose_mg": 250}
REASON = "Penicillin allergy on file."


def agent(condor_url, key, body, **session):
    """Run `body(run)` inside a run of a new session; returns (its result or exception, run id)."""
    from condor_client import AsyncCondor

    async def main():
        async with AsyncCondor(condor_url, key, wait_timeout=20) as condor:
            opened = await condor.session(patient_ref="MRN-7", age_band="adult", **session)
            run = None
            try:
                async with opened.run() as run:
                    return await body(run), run.id
            except Exception as error:  # noqa: BLE001 - handed to the test to assert on
                return error, run.id if run else None

    return asyncio.run(main())


@pytest.fixture
def run_agent(condor_url, live_agent):
    return lambda body, **session: agent(condor_url, live_agent.key, body, **session)


def test_an_allowed_call(run_agent):
    async def body(run):
        return await run.gate("record_vitals", {"heart_rate": 72}, op="create")

    allowed, run_id = run_agent(body, autonomy="autonomous")
    assert (allowed, allowed.rule_id) == ({"heart_rate": 72}, "mutate.low-tier-autonomous-allow")
    assert Run.objects.get(pk=run_id).terminal_reason == "completed"


def test_a_blocked_call(run_agent):
    from condor_client import Blocked

    async def body(run):
        return await run.gate("send_email", {"host": "mail.elsewhere.example"})

    blocked, run_id = run_agent(body)
    assert isinstance(blocked, Blocked) and blocked.rule_id == "egress.host-not-allowed"
    assert Run.objects.get(pk=run_id).terminal_reason == "error"


def test_an_approved_call(run_agent, rita_deciding):
    async def body(run):
        return await run.gate("prescribe_medication", PRESCRIPTION, op="create")

    with rita_deciding(approve_all):
        allowed, _ = run_agent(body)
    assert allowed == PRESCRIPTION and allowed.approval_id


def test_the_async_tool_runs_with_the_edited_args_and_reports(run_agent, rita_deciding):
    from condor_client import gated

    received = []

    @gated("prescribe_medication", op="create")
    async def prescribe(**args):
        received.append(args)
        return {"prescription_id": "rx-1"}

    async def body(run):
        return await prescribe(**PRESCRIPTION)

    with rita_deciding(lambda approval: {"approved": True, "edited_args": EDITED}):
        result, run_id = run_agent(body)
    assert received == [EDITED]
    assert ToolCall.objects.get(run_id=run_id).output == result == {"prescription_id": "rx-1"}


def test_a_rejection_is_denied_with_the_reason(run_agent, rita_deciding):
    from condor_client import Denied

    async def body(run):
        return await run.gate("prescribe_medication", PRESCRIPTION, op="create")

    with rita_deciding(lambda approval: {"approved": False, "reason": REASON}):
        denied, _ = run_agent(body)
    assert isinstance(denied, Denied) and denied.reason == REASON


def test_an_expiry_is_expired(run_agent, rita_deciding):
    from condor_client import Expired

    def let_it_expire(approval):
        expire_due(now=timezone.now() + timedelta(hours=1))

    async def body(run):
        return await run.gate("prescribe_medication", PRESCRIPTION, op="create")

    with rita_deciding(let_it_expire):
        expired, _ = run_agent(body)
    assert isinstance(expired, Expired)


def test_no_decision_in_time_is_timed_out(run_agent):
    from condor_client import TimedOut

    async def body(run):
        return await run.gate("prescribe_medication", PRESCRIPTION, op="create", timeout=1.5)

    timed_out, run_id = run_agent(body)
    assert isinstance(timed_out, TimedOut)
    assert Run.objects.get(pk=run_id).terminal_reason == "timeout"


def test_a_clarification_returns_the_answers(run_agent, rita_deciding):
    async def body(run):
        return await run.clarify("record_allergy", "How severe?", ["severity"], args={"substance": "penicillin"})

    with rita_deciding(lambda approval: {"values": {"severity": "mild"}}):
        values, _ = run_agent(body)
    assert values == {"severity": "mild"}
