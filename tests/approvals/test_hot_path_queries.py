"""The hot paths' SQL statements, pinned: gate allow, gate suspend, decision and resume.

Counted through the API client on PostgreSQL from BEGIN to COMMIT, both included
(`transactional_db`: the request's own transaction really commits); what runs
before BEGIN (a reviewer's session and visibility checks) is not part of it, and
nothing runs after COMMIT while nobody listens to the run or the inbox: the push then
sends nothing and leaves the published mark to the drainer (runs/publish.py); with a
listener, the mark is the one statement after COMMIT. One transaction a request, no savepoint. A change that adds a statement fails here and prints every
statement, so the new one is easy to spot; a statement saved must lower a pin here.

The ceilings are 7 (allow), 9 (suspend), 8 (decision) and 8 (resume); the pins below
are what the paths take today; each test's comment says what its statements are.
"""

import pytest
import redis
from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.models import AuditChainHead, AuditEvent
from runs import listeners
from runs.models import Run
from runs.publish import INBOX_GROUP, run_group
from tests.helpers.approval_loop import CHART_READ, approve, decide, gate, resume, suspend
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def assert_statements(request, status: int, expected: int, *, before: int = 0, after: int = 0):
    """`request()` answers `status`, with `before` statements before its BEGIN, `expected` from BEGIN to
    COMMIT and `after` after it (the published mark, when someone listens: runs/publish.py)."""
    with CaptureQueriesContext(connection) as queries:
        response = request()
    assert response.status_code == status, response.content
    sqls = [query["sql"] for query in queries.captured_queries]
    listing = "\n".join(f"{n:2}. {sql[:300]}" for n, sql in enumerate(sqls, 1))
    begin = next(i for i, sql in enumerate(sqls) if sql.upper() == "BEGIN")
    commit = next(i for i, sql in enumerate(sqls) if sql.upper() == "COMMIT")
    in_transaction, after_commit = sqls[begin : commit + 1], sqls[commit + 1 :]
    assert sqls.count("BEGIN") == 1, listing  # one transaction a request
    assert begin == before, f"{begin} statements before BEGIN, {before} pinned:\n{listing}"
    assert len(in_transaction) == expected, f"{len(in_transaction)} statements to COMMIT, {expected} pinned:\n{listing}"
    assert len(after_commit) == after, f"{len(after_commit)} statements after COMMIT, {after} pinned:\n{listing}"
    assert all('SET "published_at"' in sql for sql in after_commit), listing
    assert not any(sql.upper().startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) for sql in sqls), listing


@pytest.fixture(autouse=True)
def nobody_listens():
    """No inbox open, whatever earlier tests' sockets left marked (runs/listeners.py), nor any stream."""
    if settings.REDIS_URL:
        redis.Redis.from_url(settings.REDIS_URL).delete(listeners.group_key(INBOX_GROUP))


@pytest.fixture
def warm_run(api, run_id):
    """`run_id` after a first request has filled this process's caches (registry, API key):
    the pins count a later one."""
    assert gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="warm").status_code == 200
    return run_id


def test_an_allowed_gate_call_takes_four_statements(api, warm_run):
    # BEGIN; the run's lock with its session, client, registry stamp and the session's chain head
    # (locked last: approvals/gate.py); the audit row with the head's move, the ledger row and the
    # outbox event; COMMIT.
    assert_statements(lambda: gate(api, warm_run, tool="get_patient_summary", op="", args=CHART_READ), 200, 4)


def test_a_suspending_gate_call_takes_five_statements(api, warm_run):
    # BEGIN; the run's lock with its session and chain head; the approvals the call may meet, with
    # the conversation turn (and a tainted session's taint source) for the new card
    # (approvals/card_context.py); the verdict's and the suspend's audit rows with the head's move
    # by two links, the ledger row, the approval, the run's new state and the outbox event; COMMIT.
    assert_statements(lambda: gate(api, warm_run), 202, 5)


def test_a_gate_call_on_a_streamed_run_marks_its_push_with_one_statement_more(api, warm_run):
    async_to_sync(listeners.Listening(run_group(warm_run)).mark)()
    assert_statements(lambda: gate(api, warm_run, tool="get_patient_summary", op="", args=CHART_READ), 200, 4, after=1)


def test_a_sessions_first_audited_call_takes_three_statements_more(api, warm_run):
    # A new session's audit chain has no head yet: the run's lock finds none, so the first
    # append looks for it, creates it (a no-op for a racing first append) and locks it
    # (audit/chain.lock_head).
    fresh_run = open_executing_run(api)
    chain = f"session:{Run.objects.get(pk=fresh_run).session_id}"
    assert not AuditChainHead.objects.filter(chain=chain).exists()
    assert_statements(lambda: gate(api, fresh_run), 202, 8)
    assert AuditChainHead.objects.get(chain=chain).seq == AuditEvent.objects.filter(chain=chain).count() > 0


def test_a_resume_takes_five_statements(api, warm_run, reviewer_http):
    # BEGIN; the run's lock; the consume, with the ledger's allow, the session as it is now and
    # its chain head (locked after the approval); the audit row with the head's move, the run's
    # new state and the outbox event; COMMIT.
    approval = suspend(api, warm_run)
    approve(reviewer_http, approval["id"])
    assert_statements(lambda: resume(api, warm_run, approval["id"]), 200, 5)


def test_a_decision_takes_five_statements_after_the_reviewers_two_reads(api, warm_run, reviewer_http):
    # Before BEGIN: the Django session; the user with their reviewers-group membership and
    # their review teams (approvals/auth_backends.py). Whether the card is theirs to see is
    # checked on the row as locked (approvals/locking.py). Then BEGIN; the run's lock; the
    # approval's, with the registry's stamp (the policy in force: registry/cache.py) and the
    # session's chain head (locked after the approval); the audit row with the head's move, the
    # approval's UPDATE and the outbox event; COMMIT.
    approval = suspend(api, warm_run)
    assert_statements(lambda: decide(reviewer_http, approval["id"], {"approved": True}), 200, 5, before=2)


def test_the_hot_statements_are_prepared_once_per_connection(api, warm_run):
    """Each kept statement text (core/rows.py) runs as a prepared statement once the connection has run it
    a few times (condor/database_settings.py): PostgreSQL plans it once, not on every request."""
    for n in range(6):
        assert (
            gate(
                api, warm_run, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id=f"again-{n}"
            ).status_code
            == 200
        )
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        prepared = [statement for (statement,) in cursor.fetchall()]
    for statement in (
        'WITH locked AS (UPDATE "runs_run" SET "last_activity_at"',
        'CROSS JOIN LATERAL condor_session_as_of_now(locked."session_id")',
        'CAST(locked."session_id" AS text)) FOR UPDATE) AS head ON TRUE',
        'WITH w0 AS (INSERT INTO "approvals_auditevent"',
    ):
        assert any(statement in text for text in prepared), (statement, prepared)
