"""The hot paths' SQL statements, pinned: gate allow, gate suspend and resume (issue 11).

Counted over the whole request through the API client on PostgreSQL, commits
and after-commit pushes included (`transactional_db`: the request's own
transaction really commits). A change that adds a statement fails here and
prints every statement, so the new one is easy to spot.

Issue 11 aims at 7 (allow), 9 (suspend) and 8 (resume); the pins are what the
code does today (BEGIN and COMMIT included, as the driver sends them), so a
statement saved must lower a pin here, and one added fails.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.approvals.helpers import CHART_READ, approve, gate, open_executing_run, resume, suspend

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def statements(request):
    with CaptureQueriesContext(connection) as queries:
        response = request()
    return response, [query["sql"] for query in queries.captured_queries]


def assert_statements(sqls, expected):
    listing = "\n".join(f"{n:2}. {sql[:300]}" for n, sql in enumerate(sqls, 1))
    assert len(sqls) == expected, f"{len(sqls)} statements, {expected} pinned:\n{listing}"
    assert not any(sql.upper().startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) for sql in sqls), listing


def warm(api, run_id):
    # The first request of a process fills its caches (registry, API key): count a later one.
    assert gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ,
                tool_call_id="warm").status_code == 200


def test_an_allowed_gate_call_takes_nine_statements(api, catalog):
    run_id = open_executing_run(api)
    warm(api, run_id)
    response, sqls = statements(lambda: gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ))
    assert response.status_code == 200, response.content
    assert_statements(sqls, 9)


def test_a_suspending_gate_call_takes_nineteen_statements(api, catalog):
    run_id = open_executing_run(api)
    warm(api, run_id)
    response, sqls = statements(lambda: gate(api, run_id))
    assert response.status_code == 202, response.content
    assert_statements(sqls, 19)


def test_a_resume_takes_fifteen_statements(api, catalog, reviewer_http):
    run_id = open_executing_run(api)
    warm(api, run_id)
    approval = suspend(api, run_id)
    approve(reviewer_http, approval["id"])
    response, sqls = statements(lambda: resume(api, run_id, approval["id"]))
    assert response.status_code == 200, response.content
    assert_statements(sqls, 15)
