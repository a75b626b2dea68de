"""The gate allow's SQL floor for bench/hotpaths.py `--floor` (issue 11): what the gate's own
statements cost with none of Condor's Python around them.

Condor's gate allow does, on PostgreSQL: BEGIN, the run's lock with the session read (one
statement), the audit row, tool call and outbox event (one statement), COMMIT. The event's
published mark is the push thread's: one UPDATE for the calls of up to half a second
(runs/push_marks.py), left out here (until session 14 the floor sent one a call).
The floor endpoint (`/floor/` in bench/bare) sends exactly those statements, with the parameters a real gate call sent, through the bare
reference's DRF view: no authentication, no policy, no serializers, no middleware. Its rate
against the bare endpoint's is the best ratio any gate could reach that keeps these writes.

The statements are taken from real gate calls, in process (`capture`), one run at a time:
a run's second call, once the first has filled the process's caches (API key, registry). Each floor request replays its run's statements with a tool call id of
its own; the other parameters (timestamps, hashes of the captured call) stay as captured,
which PostgreSQL does not check.
"""

from __future__ import annotations

import enum
import pickle
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


def requests(runs: int, n: int, tag: str) -> list[tuple[str, dict]]:
    """n floor requests as (path, body) for wrk, round-robin over the captured runs as the gate's are."""
    return [("/floor/", {"run": i % runs, "tool_call_id": f"{tag}-{i}"}) for i in range(n)]
