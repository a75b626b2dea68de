"""Two checkouts of Condor side by side, in one run: are the hot paths as fast in NEW as in OLD?

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/compare.py OLD NEW

OLD and NEW are two directories holding this repository (a `git worktree` of the commit to
compare against, with this checkout's .venv linked in, and the working tree). Each is served
by its own gunicorn (gthread, the same workers and threads) from its own directory, on its own
scratch PostgreSQL database created here and migrated by its own `manage.py migrate`, under its
own Redis prefix; its API client and reviewer are made by its own management commands. From
then on everything goes over HTTP, so the two may have different modules. DATABASE_URL names
the PostgreSQL server (its database is not used); the scratch databases are dropped at the end.

Paths, each sent by client threads (an executing run each) with fixed numbers of requests:
gate allow, suspend (a gate call that parks), decision (a reviewer's approval over the
session-authenticated API, with CSRF), resume (of what the decision approved); for each side,
requests a second and the server's CPU time a request (its gunicorn workers' and their
PostgreSQL backends', from /proc: steadier than requests a second on a shared machine). Then
the whole HITL cycle over HTTP from one agent and one reviewer client (suspend, approve,
resume), and LangGraph's own cycle (interrupt, then Command(resume=...), with PostgresSaver)
on a database of its own.

The sides take turns in blocks within each phase (OLD, NEW, NEW, OLD …; the cycle cycle by
cycle), after an untimed warm-up round, `--rounds` times, the load average printed before
each round; each database is vacuumed (untimed) before each round. NEW/OLD is the median of
the rounds' own ratios. Statement counts are the servers' own: a middleware in bench/server
(not in product code) counts each request's statements with Django's
`connection.execute_wrapper` and answers them in a header.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import langgraph_reference  # noqa: E402
from bench.checkout import Checkout  # noqa: E402
from bench.condor_http import CondorHttp, parked_by_run, statements  # noqa: E402
from bench.http_load import Phase, hammer  # noqa: E402
from bench.scratch_db import drop_database, named, recreate_database  # noqa: E402
from bench.server_cpu import ServerCpu  # noqa: E402

THROUGHPUT_PATHS = ("gate allow", "suspend", "decision", "resume")
MIN_THROUGHPUT_RATIO, MAX_CYCLE_RATIO = 0.8, 1.25


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("old", type=Path, help="the checkout to compare against")
    parser.add_argument("new", type=Path, help="the checkout under test")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--blocks", type=int, default=4, help="blocks a phase is sent in, the sides taking turns block by block"
    )
    parser.add_argument("--threads", type=int, default=16, help="client threads of a throughput phase")
    parser.add_argument("--per-thread", type=int, default=40, help="requests each client thread sends a phase")
    parser.add_argument("--cycles", type=int, default=30, help="HITL cycles a round, each side and LangGraph")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers a side")
    parser.add_argument("--server-threads", type=int, default=4, help="gunicorn threads a worker")
    parser.add_argument(
        "--template-db",
        metavar="NAME",
        help="start each side's database as a copy of this one (migrated by a tree whose "
        "migrations both sides have) rather than empty; each side still migrates it",
    )
    parser.add_argument("--smoke", action="store_true", help="one tiny round: checks the bench still runs")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.blocks, args.threads, args.per_thread, args.cycles = 1, 2, 2, 4, 2
        args.workers, args.server_threads = 1, 2
    return args


class Side:
    """A checkout being measured: its server's driver and CPU meter, and what each round measured."""

    def __init__(self, checkout: Checkout):
        self.checkout, self.label = checkout, checkout.label
        self.http: CondorHttp | None = None
        self.cpu: ServerCpu | None = None
        self.rates: dict[str, list[float]] = {path: [] for path in THROUGHPUT_PATHS}
        self.cpu_ms: dict[str, list[float]] = {path: [] for path in THROUGHPUT_PATHS}
        self.statements: dict[str, str] = {}
        self.cycles: list[float] = []  # each round's median


def blocks_of(threads: list[list], blocks: int) -> list[list[list]]:
    """Each thread's requests cut into `blocks` consecutive parts: a list of threads' parts a block."""
    return [
        [requests[len(requests) * b // blocks : len(requests) * (b + 1) // blocks] for requests in threads]
        for b in range(blocks)
    ]


def in_turns(sides: list[Side], blocks: int) -> list[tuple[int, Side]]:
    """(block, side) in the order they are sent: A B, B A, A B … (each side as often first as second)."""
    return [(b, side) for b in range(blocks) for side in (sides if b % 2 == 0 else sides[::-1])]


def throughput(path: str, sides: list[Side], requests: dict[str, list[list]], blocks: int, keep: bool) -> dict:
    """Each side's requests sent in blocks, the sides taking turns; each side's phase as one, and recorded."""
    parts = {side.label: iter(blocks_of(requests[side.label], blocks)) for side in sides}
    sent = {side.label: [] for side in sides}
    before = {side.label: side.cpu.read() for side in sides}
    for _, side in in_turns(sides, blocks):
        sent[side.label].append(hammer(next(parts[side.label])))
    after = {side.label: side.cpu.read() for side in sides}
    phases = {label: Phase.merge(blocks_sent) for label, blocks_sent in sent.items()}
    for side in sides:
        phase = phases[side.label]
        cpu_ms = ServerCpu.spent(before[side.label], after[side.label]) / len(phase.latencies) * 1000
        if keep:
            side.rates[path].append(phase.rate)
            side.cpu_ms[path].append(cpu_ms)
            side.statements[path] = statements(phase.responses)
            print(
                f"  {path:<10} {side.label}  {phase.rate:7.1f} req/s  p50 {phase.p50_ms:6.1f} ms  "
                f"server CPU {cpu_ms:5.2f} ms a request  statements {side.statements[path]}",
                flush=True,
            )
    return phases


def one_round(sides: list[Side], args, round_: int) -> None:
    """Every throughput path in turn; round -1 is the untimed warm-up."""
    n, keep, tag = (args.per_thread, True, f"r{round_}") if round_ >= 0 else (max(4, args.per_thread // 4), False, "w")
    throughput(
        "gate allow", sides, {s.label: s.http.allow_requests(args.threads, n, tag) for s in sides}, args.blocks, keep
    )
    phases = throughput(
        "suspend", sides, {s.label: s.http.suspend_requests(args.threads, n, tag) for s in sides}, args.blocks, keep
    )
    parked = {label: parked_by_run(phase.responses) for label, phase in phases.items()}
    throughput(
        "decision", sides, {s.label: s.http.decision_requests(parked[s.label]) for s in sides}, args.blocks, keep
    )
    throughput("resume", sides, {s.label: s.http.resume_requests(parked[s.label]) for s in sides}, args.blocks, keep)


def cycles(sides: list[Side], args, round_: int) -> None:
    """The HITL cycle over HTTP, the sides taking turns cycle by cycle; each side's median kept."""
    times = {side.label: [] for side in sides}
    for _, side in in_turns(sides, args.cycles):
        times[side.label].append(side.http.cycle_ms(f"c{round_}-{len(times[side.label])}"))
    for side in sides:
        side.cycles.append(statistics.median(times[side.label]))
        print(f"  HITL cycle {side.label}  {side.cycles[-1]:6.1f} ms (median of {len(times[side.label])})", flush=True)


def ratio_cell(new: list[float], old: list[float]) -> tuple[float, str]:
    """The median of the rounds' own NEW/OLD ratios, and the ratios themselves."""
    ratios = [n / o for n, o in zip(new, old, strict=True)]
    return statistics.median(ratios), " ".join(f"{r:.2f}" for r in ratios)


def report(old: Side, new: Side, langgraph: list[float]) -> None:
    o, n = old.label, new.label
    print(
        f"\n| path | {o} | {n} | {n}/{o} (rounds) | server CPU a request, {o} / {n} | {o}/{n} CPU (rounds) "
        f"| target | met | statements {o} | statements {n} |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in THROUGHPUT_PATHS:
        rate, rate_rounds = ratio_cell(new.rates[path], old.rates[path])
        cpu, cpu_rounds = ratio_cell(old.cpu_ms[path], new.cpu_ms[path])
        met = {(True, True): "yes", (False, False): "NO"}.get(
            (rate >= MIN_THROUGHPUT_RATIO, cpu >= MIN_THROUGHPUT_RATIO),
            "by CPU only" if cpu >= MIN_THROUGHPUT_RATIO else "by req/s only",
        )
        print(
            f"| {path} | {statistics.median(old.rates[path]):.0f} req/s | {statistics.median(new.rates[path]):.0f} "
            f"req/s | **{rate:.2f}** ({rate_rounds}) | {statistics.median(old.cpu_ms[path]):.2f} / "
            f"{statistics.median(new.cpu_ms[path]):.2f} ms | **{cpu:.2f}** ({cpu_rounds}) "
            f"| ≥ {MIN_THROUGHPUT_RATIO} | {met} | {old.statements[path]} | {new.statements[path]} |"
        )
    ratio, rounds = ratio_cell(new.cycles, old.cycles)
    print(
        f"| HITL cycle (median) | {statistics.median(old.cycles):.1f} ms | {statistics.median(new.cycles):.1f} ms "
        f"| **{ratio:.2f}** ({rounds}) | | | ≤ {MAX_CYCLE_RATIO} | {'yes' if ratio <= MAX_CYCLE_RATIO else 'NO'} | | |"
    )
    reference = statistics.median(langgraph)
    print(
        f"| LangGraph cycle, PostgresSaver | {reference:.1f} ms | | {o} {statistics.median(old.cycles) / reference:.2f}×, "
        f"{n} {statistics.median(new.cycles) / reference:.2f}× LangGraph | | | | | | |"
    )
    print(
        "Server CPU: the gunicorn workers' and their PostgreSQL backends' (from /proc), over the requests sent; "
        f"{o}/{n} CPU is the throughput NEW would keep were both CPU-bound. Statements: BEGIN to COMMIT as "
        "tests/approvals/test_hot_path_queries.py pins them, +those outside a transaction, counted by each "
        "server (bench/server/bench_statements.py)."
    )


def main() -> None:
    args = options()
    started = time.perf_counter()
    server_url, redis_url = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not server_url.startswith(("postgres://", "postgresql://")) or not redis_url:
        raise SystemExit("set DATABASE_URL (any database of the PostgreSQL server to use) and REDIS_URL")
    tag = f"condor_compare_{os.getpid()}"
    checkouts = [
        Checkout(
            label,
            tree,
            named(server_url, f"{tag}_{label.lower()}"),
            redis_url,
            f"condor-compare-{os.getpid()}-{label.lower()}",
        )
        for label, tree in (("OLD", args.old), ("NEW", args.new))
    ]
    langgraph_url = named(server_url, f"{tag}_langgraph")
    sides = [Side(checkout) for checkout in checkouts]
    for checkout in checkouts:
        print(checkout.describe())
    try:
        for checkout in checkouts:
            checkout.create_database(args.template_db)
        with ThreadPoolExecutor(2) as pool:  # the two migrations at once
            list(pool.map(Checkout.prepare, checkouts))
        recreate_database(langgraph_url)
        print(
            f"prepared in {time.perf_counter() - started:.0f} s; gunicorn gthread, {args.workers} workers × "
            f"{args.server_threads} threads a side; {args.threads} client threads × {args.per_thread} requests "
            f"a phase; {args.cycles} cycles",
            flush=True,
        )
        with ExitStack() as servers:
            served = [side.checkout.serve(workers=args.workers, threads=args.server_threads) for side in sides]
            for server in served:
                servers.callback(server.stop)
                server.start()
            for side, server in zip(sides, served, strict=True):
                server.wait()
                side.http = CondorHttp(server.base, side.checkout.key, side.checkout.reviewer, side.checkout.password)
                side.cpu = ServerCpu(server.process.pid, side.checkout.database_url)
                servers.callback(side.cpu.close)
            if not args.smoke:
                one_round(sides, args, -1)  # untimed: each server's caches, pools and prepared statements filled
            langgraph = []
            for round_ in range(args.rounds):
                for side in sides:
                    side.checkout.vacuum()
                order = sides if round_ % 2 == 0 else sides[::-1]
                print(
                    f"round {round_ + 1} ({' then '.join(s.label for s in order)}): load average "
                    f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                    flush=True,
                )
                one_round(order, args, round_)
                cycles(order, args, round_)
                langgraph.append(langgraph_reference.cycle_ms(langgraph_url, args.cycles))
                print(f"  LangGraph cycle {langgraph[-1]:6.1f} ms", flush=True)
        report(*sides, langgraph)
        print(
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
            f"wall time {time.perf_counter() - started:.0f} s"
        )
    finally:
        for checkout in checkouts:
            checkout.forget()
        drop_database(langgraph_url)


if __name__ == "__main__":
    main()
