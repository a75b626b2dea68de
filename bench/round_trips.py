"""What a round trip and a commit cost on this machine, and what folding them would save (issue 11).

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_x .venv/bin/python bench/round_trips.py [--rounds 10]

Every hot path is one transaction shaped like this: BEGIN, the run's lock (a SELECT … FOR
UPDATE), one data-modifying statement, COMMIT, four round trips, of which psycopg sends
BEGIN and Django sends COMMIT on their own. This times that shape with psycopg alone, on
two tables of its own, against:

- `pipelined`: the same transaction with BEGIN sent in psycopg's pipeline mode together
  with the lock, one round trip fewer, as a backend could do it;
- `one statement`: the lock and the write as one autocommit statement (a CTE), one round
  trip in all: what no round trip but the work and the commit's flush costs;
- `empty`: `SELECT 1` in autocommit, one bare round trip.

Each shape runs in blocks of `--block` transactions, the shapes in turns, `--rounds` times;
it prints the medians of wall time and of CPU time per transaction, the client's (this
process) and the server's (the backend's own /proc entry: PostgreSQL runs on this machine),
and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch_db import backend_cpu_seconds, ensure_database  # noqa: E402

LOCK = "SELECT id, n FROM bench_rt_run WHERE id = %s FOR UPDATE"
INSERT = "INSERT INTO bench_rt_row (run, body) VALUES (%s, %s)"
FOLDED = ("WITH locked AS (SELECT id FROM bench_rt_run WHERE id = %s FOR UPDATE) "
          "INSERT INTO bench_rt_row (run, body) SELECT id, %s FROM locked")
BODY = "x" * 200  # about what an event row's payload is


def shapes(url: str) -> dict:
    import psycopg

    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute("DROP TABLE IF EXISTS bench_rt_run, bench_rt_row")
        setup.execute("CREATE TABLE bench_rt_run (id int PRIMARY KEY, n int)")
        setup.execute("INSERT INTO bench_rt_run VALUES (1, 0)")
        setup.execute("CREATE TABLE bench_rt_row (id bigserial PRIMARY KEY, run int, body text)")
    in_transaction = psycopg.connect(url)
    autocommit = psycopg.connect(url, autocommit=True)

    def transaction():
        cursor = in_transaction.cursor()
        cursor.execute(LOCK, (1,), prepare=True)
        cursor.fetchone()
        cursor.execute(INSERT, (1, BODY), prepare=True)
        in_transaction.commit()

    def pipelined():
        cursor = in_transaction.cursor()
        with in_transaction.pipeline():
            cursor.execute(LOCK, (1,), prepare=True)
            cursor.fetchone()
        cursor.execute(INSERT, (1, BODY), prepare=True)
        in_transaction.commit()

    def one_statement():
        autocommit.execute(FOLDED, (1, BODY), prepare=True)

    def empty():
        autocommit.execute("SELECT 1", prepare=True)

    backend = {conn: conn.info.backend_pid for conn in (in_transaction, autocommit)}
    return {"transaction": (transaction, backend[in_transaction]),
            "pipelined": (pipelined, backend[in_transaction]),
            "one statement": (one_statement, backend[autocommit]),
            "empty": (empty, backend[autocommit])}


def timed_block(shape, backend_pid: int, size: int) -> tuple[float, float, float]:
    wall, client, server = time.perf_counter(), time.process_time(), backend_cpu_seconds(backend_pid)
    for _ in range(size):
        shape()
    ended = backend_cpu_seconds(backend_pid)
    server_us = float("nan") if server is None else (ended - server) * 1e6 / size  # nan: the server is elsewhere
    return (time.perf_counter() - wall) * 1e6 / size, (time.process_time() - client) * 1e6 / size, server_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block", type=int, default=500)
    options = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/condor_x")
    ensure_database(url)
    measured = shapes(url)
    print("load average", os.getloadavg())
    for shape, pid in measured.values():
        timed_block(shape, pid, options.block // 5)  # warm: statements prepared, caches full
    figures = {name: [] for name in measured}
    for _ in range(options.rounds):
        for name, (shape, pid) in measured.items():
            figures[name].append(timed_block(shape, pid, options.block))
    print("load average", os.getloadavg())
    print(f"{'':15s} {'wall':>9s} {'client CPU':>11s} {'server CPU':>11s}   (µs a transaction, medians)")
    for name, rows in figures.items():
        wall, client, server = (statistics.median(column) for column in zip(*rows))
        print(f"{name:15s} {wall:9.1f} {client:11.1f} {server:11.1f}")


if __name__ == "__main__":
    main()
