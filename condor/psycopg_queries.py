"""psycopg's cache of converted statements, widened to fit Condor's folded hot statements (issue 11).

Before sending a statement, psycopg rewrites its `%s` placeholders as PostgreSQL's
`$1`, `$2`… by scanning the whole text. It keeps the result (an LRU of 128 texts)
only for statements of at most 4,096 bytes and 50 parameters: beyond that it
expects an ORM's bulk INSERT whose text changes with its number of rows, and
keeping those would fill the cache with one-off entries. A suspend and a decision
each fold their writes into one statement of a fixed text (condor/sql.py
`run_together`) with 83 and 54 parameters, so psycopg scanned them again on every
request: 0.35 and 0.22 ms of CPU (bench/README.md, "Session 7").

The length cap stays as it is, so a sweep batch's statements are still never kept;
only the parameter cap is raised, to what the fixed texts need with room to grow.
psycopg has no public setting for this: `tests/test_psycopg_queries.py` fails if
an upgrade moves it.
"""

from psycopg import _queries

KEPT_STATEMENT_PARAMS = 160


def keep_folded_statements() -> None:
    """Let psycopg keep the conversion of statements with up to KEPT_STATEMENT_PARAMS parameters (idempotent)."""
    _queries.MAX_CACHED_STATEMENT_PARAMS = max(_queries.MAX_CACHED_STATEMENT_PARAMS, KEPT_STATEMENT_PARAMS)
