"""The sweep over a backlog of idle runs: 100,000 then 200,000, time and peak memory.

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_sweep \
    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/sweep.py

The database is created and migrated if needed. For each size, the backlog is seeded
here (sessions, executing runs last touched an hour ago, each with its opened and
transitioned events and a verdict audit row, so every session chain exists), then one
sweep pass runs, split over `--workers` child processes as the Celery tasks split it
with CONDOR_SWEEP_PARTS (condor/tasks.py: each walks its slice of the key space; the
code the beat task runs, with a budget large enough to drain everything). Printed: the
wall time from the first share's start to the last one's end, the CPU time of all of
them (and of their PostgreSQL backends, read from /proc when the server is local), and
the largest peak RSS of one: a child does nothing else, so its peak (VmHWM, its own; not
ru_maxrss, which Linux carries over from the parent it was forked from) is its share's
memory. `--workers 1` is one process doing the whole pass. Each close writes what a
real one writes: the run UPDATE, its `run.closed` outbox event, its `run_close` audit
row linked into its session's chain, its telemetry row, and after each batch's commit
the push (Redis channel layer when REDIS_URL is set). A sample of the closed chains is
then verified. Target: at most 30 s per 100,000 runs on this 2-core machine,
time linear in the backlog, memory flat. Rows are left in the database (the audit log
is append-only): point DATABASE_URL at a scratch database.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")
from bench.scratch_db import ensure_database, setup_django  # noqa: E402
from bench.server_cpu import cpu_seconds  # noqa: E402


def seed(count: int, client_id: int) -> None:
    """`count` idle executing runs, one per session, with the rows a real run has by then.

    Written with COPY (the ORM would take longer than the sweep): each run has its
    `run.opened` and `run.transitioned` events, published, and its session a one-row
    audit chain (a verdict), so the close appends to chains that exist, as in life.
    """
    from django.db import connection, transaction
    from django.utils import timezone

    from audit.chain import HASHED_FIELDS, row_hash
    from audit.models import GENESIS_HASH

    idle_since = timezone.now() - timedelta(hours=1)
    sessions = [uuid.uuid4() for _ in range(count)]
    runs = [uuid.uuid4() for _ in range(count)]
    with transaction.atomic(), connection.cursor() as cursor:
        copy = cursor.cursor.copy
        with copy(
            "COPY sessions_app_session (id, client_id, title, patient_ref, care_unit, autonomy, consent, "
            "age_band, tainted, created_at, updated_at) FROM STDIN"
        ) as rows:
            for session in sessions:
                rows.write_row(
                    (
                        session,
                        client_id,
                        "bench: sweep",
                        f"MRN-{random.randrange(10**6)}",
                        "",
                        "guarded",
                        False,
                        "unknown",
                        False,
                        idle_since,
                        idle_since,
                    )
                )
        with copy(
            "COPY runs_run (id, session_id, state, terminal_reason, autonomy, flow_key, engine, summary, "
            "usage, created_at, last_activity_at) FROM STDIN"
        ) as rows:
            for run, session in zip(runs, sessions, strict=True):
                rows.write_row((run, session, "executing", "", "guarded", "", "", "", "{}", idle_since, idle_since))
        with copy(
            "COPY runs_runevent (run_id, kind, step_id, data, frames, created_at, published_at) FROM STDIN"
        ) as rows:
            for run in runs:
                rows.write_row((run, "run.opened", "", '{"state": "pending"}', "[]", idle_since, idle_since))
                rows.write_row((run, "run.transitioned", "", '{"state": "executing"}', "[]", idle_since, idle_since))
        heads = []
        with copy(f"COPY approvals_auditevent ({', '.join(HASHED_FIELDS)}, hash) FROM STDIN") as rows:
            for run, session in zip(runs, sessions, strict=True):
                chain = f"session:{session}"
                values = (
                    chain,
                    1,
                    GENESIS_HASH,
                    idle_since,
                    "verdict",
                    "client:bench-sweep",
                    None,
                    client_id,
                    str(session),
                    str(run),
                    None,
                    "MRN-0",
                    "search_patients",
                    "read",
                    "allow",
                    "read.allow",
                    {},
                )
                digest = row_hash(values)
                rows.write_row((*values[:-1], "{}", digest))
                heads.append((chain, 1, digest))
        with copy("COPY approvals_auditchainhead (chain, seq, hash) FROM STDIN") as rows:
            for head in heads:
                rows.write_row(head)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def sweep_child(part: int, parts: int) -> None:
    """Share `part` of `parts` of one sweep pass in this (child) process, as the Celery tasks run it
    (condor/tasks.py: part 0 the whole pass over its slice, the others `sweep_share`); prints its
    figures as JSON on the last line. Starts when the parent says so, so the shares run at once."""
    setup_django()
    from condor.sweeps import sweep, sweep_share
    from runs.sweep_batches import Share

    backend = _backend_pid()
    print("ready", flush=True)
    sys.stdin.readline()
    began, began_cpu, began_db, stamp = time.perf_counter(), time.process_time(), cpu_seconds(backend), time.time()
    counts = sweep(share=Share(0, parts)) if part == 0 else sweep_share(Share(part, parts))
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    db_cpu = cpu_seconds(backend) - began_db if began_db is not None and _backend_pid() == backend else None
    print(
        json.dumps(
            {
                "counts": counts,
                "wall": wall,
                "cpu": cpu,
                "db_cpu": db_cpu,
                "peak_mib": _peak_rss_mib(),
                "began": stamp,
                "ended": stamp + wall,
            }
        )
    )


def _peak_rss_mib() -> float:
    """This process's own peak RSS. Not ru_maxrss: Linux carries that across exec, so a child
    started from this bench's parent (large after seeding) would report the parent's peak."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return int(status.split("VmHWM:")[1].split()[0]) / 1024  # kB


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def run_children(batch: int, workers: int) -> dict:
    """One pass split over `workers` child processes; their figures combined (wall: first start to last end)."""
    env = {**os.environ, "CONDOR_SWEEP_BUDGET_SECONDS": "3600", "CONDOR_SWEEP_BATCH_SIZE": str(batch)}
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--child", str(part), str(workers)],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for part in range(workers)
    ]
    for child in children:
        if child.stdout.readline().strip() != "ready":
            sys.exit(f"a sweep child did not start:\n{child.communicate()[1][-3000:]}")
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    figures = []
    for child in children:
        out, err = child.communicate()
        if child.returncode:
            sys.exit(f"the sweep pass failed:\n{err[-3000:]}")
        figures.append(json.loads(out.strip().splitlines()[-1]))
    return {
        "closed": sum(f["counts"]["runs_idle"] for f in figures),
        "wall": max(f["ended"] for f in figures) - min(f["began"] for f in figures),
        "cpu": sum(f["cpu"] for f in figures),
        "peak_mib": max(f["peak_mib"] for f in figures),
        "db_cpu": None if None in [f["db_cpu"] for f in figures] else sum(f["db_cpu"] for f in figures),
        "counts": [f["counts"] for f in figures],
    }


def verify_sample(sample: int) -> str:
    from audit import chain as audit_chain
    from runs.models import Run

    sessions = list(
        Run.objects.filter(terminal_reason="sweep_idle").order_by("?").values_list("session_id", flat=True)[:sample]
    )
    report = audit_chain.verify(audit_chain.chain_for(session) for session in sessions)
    return f"{report.chains} chains sampled: {'intact' if report.intact else report.broken}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 200_000])
    parser.add_argument("--batch", type=int, default=1000, help="CONDOR_SWEEP_BATCH_SIZE for the pass")
    parser.add_argument("--verify-sample", type=int, default=2000, help="closed session chains to verify")
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="worker processes the pass is split over (CONDOR_SWEEP_PARTS, condor/tasks.py)",
    )
    parser.add_argument("--smoke", action="store_true", help="300 runs in batches of 100: checks the bench still runs")
    parser.add_argument("--child", type=int, nargs=2, metavar=("PART", "PARTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.batch, args.verify_sample = [300], 100, 20
    if args.child:
        sweep_child(*args.child)
        return

    url = os.environ.get("DATABASE_URL")
    if not url:
        sys.exit("set DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_sweep")
    ensure_database(url)
    setup_django()
    from django.conf import settings
    from django.db import connection

    from agents.models import ApiClient
    from condor.sweeps import sweep

    client, _ = ApiClient.objects.get_or_create(name="bench-sweep")
    sweep()  # a backlog left by an interrupted run would be counted in the first size
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = cursor.fetchone()[0]
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"PostgreSQL {pg_version}; channel layer {layer}; batch {args.batch}; "
        f"the pass split over {args.workers} worker process(es)"
    )
    print(
        f"{'runs':>8} {'closed':>8} {'seed s':>7} {'pass s':>7} {'cpu s':>6} {'cpu/100k':>8} {'pg cpu/100k':>11} "
        f"{'s/100k':>7} {'runs/s':>7} {'peak MiB':>9} {'load before/after':>18}"
    )
    for size in args.sizes:
        began = time.perf_counter()
        seed(size, client.pk)
        seeded = time.perf_counter() - began
        connection.close()  # the child must not queue behind this process's connection
        load_before = os.getloadavg()[0]
        figures = run_children(args.batch, args.workers)
        closed = figures["closed"]
        print(
            f"{size:8,} {closed:8,} {seeded:7.1f} {figures['wall']:7.1f} {figures['cpu']:6.1f} "
            f"{figures['cpu'] / size * 100_000:8.1f} "
            f"{'-' if figures['db_cpu'] is None else format(figures['db_cpu'] / size * 100_000, '.1f'):>11} "
            f"{figures['wall'] / size * 100_000:7.1f} "
            f"{closed / figures['wall']:7.0f} {figures['peak_mib']:9.1f} "
            f"{load_before:8.1f} / {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if closed != size:
            sys.exit(f"the pass closed {closed} of {size}: {figures['counts']}")
    print(verify_sample(args.verify_sample))


if __name__ == "__main__":
    main()
