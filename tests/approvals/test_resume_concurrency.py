"""Single use under contention, on real PostgreSQL: of many concurrent resumes exactly one wins.

Every thread has its own database connection (Django's are per thread), all are
released together by a barrier, and each closes its connection when done.
"""

import threading

import pytest
from django.db import connection, transaction

from approvals.models import Approval
from approvals.resume import resume as resume_service
from audit.models import AuditEvent
from core.errors import CondorError
from runs.models import Run, RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, approve, parked_run, resume
from tests.helpers.personas import api_for
from tests.helpers.races import all_at_once, wait_until_queued

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

THREADS = 16


@pytest.fixture
def approved(api, reviewer_http):
    """(run id, approval id) of a parked prescription a reviewer has approved."""
    run_id, approval = parked_run(api)
    approve(reviewer_http, approval["id"])
    return run_id, approval["id"]


def in_threads(attempt, count=THREADS) -> list:
    """`attempt()` in `count` threads at once: what each returned, or the code it was refused with."""
    return [
        outcome.code
        if isinstance(outcome, CondorError)
        else repr(outcome)
        if isinstance(outcome, Exception)
        else outcome
        for outcome in all_at_once([attempt] * count)
    ]


def resume_requests_at_once(ward_agent, approved, *, key=None) -> list[tuple[int, dict]]:
    """THREADS resume requests for the approved call at once, each on its own client: (status, body) of each."""
    run_id, approval_id = approved

    def attempt():
        response = resume(api_for(ward_agent), run_id, approval_id, key=key)
        return response.status_code, response.json()

    return in_threads(attempt)


def assert_consumed_once(run_id, approval_id):
    assert Approval.objects.get(pk=approval_id).status == "consumed"
    assert AuditEvent.objects.filter(kind=AuditEvent.Kind.CONSUME, approval_id=approval_id).count() == 1
    assert RunEvent.objects.filter(run_id=run_id, kind="approval.consumed").count() == 1
    assert RunEvent.objects.filter(run_id=run_id, kind="run.resumed").count() == 1
    assert Run.objects.get(pk=run_id).state == "executing"


@pytest.mark.parametrize("round_", range(20))
def test_exactly_one_of_sixteen_concurrent_resumes_wins(approved, ward_agent, round_):
    run_id, approval_id = approved

    def attempt():
        resume_service(Run.objects.get(pk=run_id), approval_id, PRESCRIPTION, client=ward_agent)
        return "won"

    outcomes = in_threads(attempt)
    assert sorted(outcomes) == ["approval_consumed"] * (THREADS - 1) + ["won"]
    assert_consumed_once(run_id, approval_id)


@pytest.mark.parametrize("round_", range(3))
def test_exactly_one_of_sixteen_concurrent_resume_requests_wins(approved, ward_agent, round_):
    answers = resume_requests_at_once(ward_agent, approved)
    outcomes = ["won" if status == 200 else body["error"] for status, body in answers]
    assert sorted(outcomes) == ["approval_consumed"] * (THREADS - 1) + ["won"]
    assert_consumed_once(*approved)


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_retries_with_one_key_consume_once_and_agree(approved, ward_agent, round_):
    outcomes = resume_requests_at_once(ward_agent, approved, key="k-1")
    assert {status for status, _ in outcomes} == {200}, outcomes
    assert all(answer == outcomes[0][1] for _, answer in outcomes)
    assert_consumed_once(*approved)


# --- a deterministic interleaving ---------------------------------------------------------------


def test_a_resume_blocked_on_the_row_lock_loses_to_the_holder(approved, ward_agent):
    run_id, approval_id = approved
    b_pid, outcome = [], {}

    def consume_b():
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                b_pid.append(cursor.fetchone()[0])
            resume_service(Run.objects.get(pk=run_id), approval_id, PRESCRIPTION, client=ward_agent)
            outcome["b"] = "won"
        except CondorError as error:
            outcome["b"] = error.code
        finally:
            connection.close()

    b = threading.Thread(target=consume_b)
    with transaction.atomic():
        # A holds the run and the approval rows, taken in the order every service
        # takes them (run, then approvals): B's resume must queue behind A.
        Run.objects.select_for_update().get(pk=run_id)
        Approval.objects.select_for_update().get(pk=approval_id)
        b.start()
        # Queued on the lock until A commits: no pause needed to see that B has not finished.
        wait_until_queued(lambda: b_pid[0] if b_pid else None)
        assert b.is_alive(), "B finished while A still held the row"
        # A consumes through the same service, inside its transaction, and commits.
        resume_service(Run.objects.get(pk=run_id), approval_id, PRESCRIPTION, client=ward_agent)
    b.join(timeout=10)
    assert not b.is_alive()
    assert outcome == {"b": "approval_consumed"}
    assert_consumed_once(run_id, approval_id)
