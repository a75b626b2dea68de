"""The gate allow's SQL floor for bench/hotpaths.py `--floor` (issue 11): what the gate's own
statements cost with none of Condor's Python around them.

Condor's gate allow does, on PostgreSQL: BEGIN, the run's lock with the session read (one
statement), the audit row, tool call and outbox event (one statement), COMMIT. The event's
published mark is the push thread's: one UPDATE for the calls of up to half a second
(runs/push_marks.py), left out here (until session 14 the floor sent one a call).
The floor endpoint (`/floor/` in bench/bare) sends exactly those statements, with the parameters a real gate call sent, through the bare
reference's DRF view: no authentication, no policy, no serializers, no middleware. Its rate
against the bare endpoint's is the best ratio any gate could reach that keeps these writes.

The folded floor (`/floor-folded/`, session 20) sends the same two statements as one, with no
BEGIN or COMMIT: the lock statement's CTE, its read as a second CTE, then the write's CTEs, in
autocommit (`fold`). It is what a gate that took its verdict before the lock and sent every
write in the statement that locks could reach at best: such a gate would also need the
statement to check that the session is still as its verdict saw it, which this one leaves out.

The statements are taken from real gate calls, in process (`capture`), one run at a time:
a run's second call, once the first has filled the process's caches (API key, registry). Each floor request replays its run's statements with a tool call id of
its own; the other parameters (timestamps, hashes of the captured call) stay as captured,
which PostgreSQL does not check.
"""

from __future__ import annotations

import enum
import pickle
from functools import cache
from pathlib import Path

LOCK_PREFIX = "WITH locked AS"
WRITE_PREFIX = "WITH audit_head AS"


def _plain(value):
    """A parameter the bare process can unpickle without Condor's apps: enums as their value, Jsonb tagged."""
    from psycopg.types.json import Jsonb

    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Jsonb):
        return ("jsonb", value.obj)
    return value


def capture(agent, runs: list[str], target: Path) -> None:
    """Write to `target` each run's lock and write statements, from that run's second allowed gate call.

    `agent` is a bench.hotpaths_cpu.Wsgi with the bench client's key (the calls go through
    Condor's whole application in this process).
    """
    from django.db import connection

    from bench.hotpaths import allowed_call

    by_run = []
    for index, run_id in enumerate(runs):
        path = f"/api/v1/runs/{run_id}/tool-calls/"
        agent.post(path, allowed_call(f"floor-warm-{index}"), 200)
        seen = []

        def keep(execute, sql, params, many, context):
            seen.append((sql, params))
            return execute(sql, params, many, context)

        tool_call_id = f"floor-captured-{index}"
        with connection.execute_wrapper(keep):
            agent.post(path, allowed_call(tool_call_id), 200)
        lock = [(sql, params) for sql, params in seen if sql.startswith(LOCK_PREFIX)]
        write = [(sql, params) for sql, params in seen if sql.startswith(WRITE_PREFIX)]
        if len(lock) != 1 or len(write) != 1 or len(seen) != 2:
            raise SystemExit(f"the gate's statements changed: {[sql[:60] for sql, _ in seen]}; update bench/floor.py")
        (lock_sql, lock_params), (write_sql, write_params) = lock[0], write[0]
        where = [i for i, value in enumerate(write_params) if value == tool_call_id]
        if len(where) != 1:
            raise SystemExit(f"the tool call id is {len(where)} of the write's parameters; update bench/floor.py")
        by_run.append({"lock": (lock_sql, [_plain(v) for v in lock_params]),
                       "write": (write_sql, [_plain(v) for v in write_params]), "tool_call_id_at": where[0]})
    target.write_bytes(pickle.dumps({"runs": by_run}))


@cache  # one text a captured run, asked for on every request
def fold(lock_sql: str, write_sql: str) -> str:
    """The lock statement and the write statement as one: their CTEs in a row, the lock's read among them.

    The parameters are the lock's, then the write's: the lock's all stand in its CTE, and
    neither final SELECT has any.
    """
    cte_end = lock_sql.index(') SELECT "locked"')
    lock_cte, lock_read = lock_sql[len("WITH "):cte_end + 1], lock_sql[cte_end + 2:]
    write_end = write_sql.rindex(") SELECT NULL, ")
    write_ctes, write_read = write_sql[len("WITH "):write_end + 1], write_sql[write_end + 2:]
    # The read is a CTE no write refers to: the final SELECT names it, so that it runs.
    return (f"WITH {lock_cte}, lock_read AS ({lock_read}), {write_ctes} "
            f"{write_read.replace('SELECT NULL, ', 'SELECT (SELECT count(*) FROM lock_read), ', 1)}")


def requests(runs: int, n: int, tag: str, path: str = "/floor/") -> list[tuple[str, dict]]:
    """n floor requests (`path`: /floor/ or /floor-folded/) as (path, body) for wrk, round-robin over
    the captured runs as the gate's are."""
    return [(path, {"run": i % runs, "tool_call_id": f"{tag}-{i}"}) for i in range(n)]
