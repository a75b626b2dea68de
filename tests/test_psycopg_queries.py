"""psycopg keeps its conversion of the hot paths' folded statements (condor/psycopg_queries.py, issue 11).

psycopg rewrites a statement's `%s` placeholders by scanning its text, and keeps the
result only below a size and a parameter cap of its own. A suspend's and a decision's
folded statements have more parameters than psycopg's default cap (50): without the
widened cap they were scanned again on every request.
"""

import psycopg._queries
import pytest
from django.db import connection

from condor.psycopg_queries import KEPT_STATEMENT_PARAMS
from tests.helpers.approval_loop import approve, park, resume

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="psycopg's conversion is PostgreSQL's"),
]


@pytest.fixture
def scans(monkeypatch) -> list[tuple[int, bytes]]:
    """(parameters, text) of each statement psycopg converts without keeping the result, from now on."""
    scanned = []
    convert = psycopg._queries._query2pg_nocache

    def counted(query: bytes, encoding: str):
        scanned.append((query.count(b"%s"), query[:120]))
        return convert(query, encoding)

    # psycopg looks the function up by this name on every statement it does not keep.
    monkeypatch.setattr(psycopg._queries, "_query2pg_nocache", counted)
    return scanned


def test_the_parameter_cap_is_raised():
    assert psycopg._queries.MAX_CACHED_STATEMENT_PARAMS >= KEPT_STATEMENT_PARAMS


def test_a_suspend_a_decision_and_a_resume_scan_no_statement_again(api, run_id, reviewer_http, scans):
    approval = park(api, run_id)  # the first of each: psycopg converts its statements and keeps them
    approve(reviewer_http, approval["id"])
    assert resume(api, run_id, approval["id"]).status_code == 200
    scans.clear()
    approval = park(api, run_id)
    approve(reviewer_http, approval["id"])
    assert resume(api, run_id, approval["id"]).status_code == 200
    assert scans == []


def test_a_statement_past_the_cap_is_still_not_kept(scans):
    with connection.cursor() as cursor:
        for _ in range(2):
            cursor.execute("SELECT " + ", ".join(["%s::int"] * (KEPT_STATEMENT_PARAMS + 1)),
                           list(range(KEPT_STATEMENT_PARAMS + 1)))
    assert [parameters for parameters, _ in scans] == [KEPT_STATEMENT_PARAMS + 1] * 2
