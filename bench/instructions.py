"""Instructions a request on the hot paths, counted by valgrind (issue 11): figures the machine's load cannot move.

Run by hand from the repository root, with PostgreSQL and Redis up:

    .venv/bin/python bench/instructions.py [--paths gate,suspend,decision,resume] [--requests 30] \
        [--tree /path/to/another/checkout ...]

Timings on this shared two-core machine spread by 20-40% from one run to the next, more
than most single changes move them. Callgrind counts the instructions the Python process
executes instead (valgrind's callgrind tool, `apt-get install valgrind`): the same code on
the same data counts the same within about 2% whatever else runs, so a change of a few
percent shows. It counts this process only: PostgreSQL's and Redis's own work, and the
time spent waiting for them, are not in the figure (bench/hotpaths.py measures those).

Each (tree, path) runs in a process of its own under callgrind, against a scratch
database of that tree's (`condor_instructions_<n>`, created and migrated), through the
WSGI application as bench/hotpaths_cpu.py drives it. Counting starts after ten warm-up
gate calls (and, for suspend, decision and resume, a warm-up of each) and stops after
`--requests` requests of the path; the figure is instructions divided by requests. The
push thread's work for those requests is counted too (REDIS_URL is set). `--tree`:
more checkouts to count (e.g. a `git worktree` of an earlier commit with this
repository's .venv linked in), each printed with its ratio to this one. Under valgrind a
request takes about a second: 30 requests of four paths on two trees take ~15 minutes
(`--jobs 2` runs two at a time).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATHS = ("gate", "suspend", "decision", "resume")
WARMUP = 10


def _set_up() -> None:
    tree = Path(os.environ["CONDOR_TREE"])
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
    from bench.scratch_db import ensure_database, setup_django

    ensure_database(os.environ["DATABASE_URL"])
    setup_django()


def child(path: str, n: int) -> None:
    """Runs in the counted process: set up, then `n` requests of `path` between the two markers."""
    _set_up()  # the database was migrated beforehand (`count`): here it finds nothing to do
    from bench import hotpaths_cpu as h

    agent, browser = h.actors()
    run_id, parked = h.executing_run(agent), h.executing_run(agent)
    tag = f"i{time.time_ns()}"
    for i in range(WARMUP):
        agent.post(f"/api/v1/runs/{run_id}/tool-calls/", h.gate_call(f"{tag}-w{i}", allowed=True), 200)
    approvals = []

    def suspend(i):
        body = agent.post(f"/api/v1/runs/{parked}/tool-calls/", h.gate_call(f"{tag}-s{i}", allowed=False, days=i + 1),
                          202)
        approvals.append((body["approval"]["id"], {**h.PRESCRIPTION, "days": i + 1}))

    def decide(i):
        browser.post(f"/api/v1/approvals/{approvals[i][0]}/decision/", {"approved": True}, 200)

    def resume(i):
        agent.post(f"/api/v1/runs/{parked}/resume/", {"approval_id": approvals[i][0], "args": approvals[i][1]}, 200)

    for i in range(2):  # each of the other three paths once, before counting
        suspend(i)
        decide(i)
        resume(i)
    first = len(approvals)
    if path in ("decision", "resume"):
        for i in range(n):
            suspend(first + i)
    if path == "resume":
        for i in range(n):
            decide(first + i)
    send = {
        "gate": lambda i: agent.post(f"/api/v1/runs/{run_id}/tool-calls/", h.gate_call(f"{tag}-a{i}", allowed=True),
                                     200),
        "suspend": lambda i: suspend(first + i),
        "decision": lambda i: decide(first + i),
        "resume": lambda i: resume(first + i),
    }[path]
    os.getppid()  # callgrind zeroes its counts here (--zero-before=getppid)
    for i in range(n):
        send(i)
    os.getpgrp()  # and dumps them here (--dump-before=getpgrp)
    from runs import publish

    publish.flush(10)


def count(tree: Path, path: str, n: int, database: str) -> float:
    """Instructions a request of `path` in `tree`, in millions."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        env = {**os.environ, "CONDOR_TREE": str(tree), "DATABASE_URL": database}
        env.setdefault("REDIS_URL", "redis://127.0.0.1:6379/5")
        # Created and migrated first, outside the counted process: a process that has just run
        # every migration counts ~30% more a request (what it leaves in memory), as no server does.
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--prepare"], cwd=tree, env=env, check=True,
                       capture_output=True)
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--zero-before=getppid",
             "--dump-before=getpgrp", sys.executable, str(Path(__file__).resolve()), "--child", path, str(n)],
            cwd=tree, env=env, capture_output=True, text=True)
        dumped = Path(f"{out}.1")
        if done.returncode != 0 or not dumped.exists():
            raise SystemExit(f"{tree} {path}: callgrind run failed\n{done.stderr[-3000:]}")
        if Path(f"{out}.2").exists():  # the marker functions must run once each, around the requests
            raise SystemExit(f"{tree} {path}: getpgrp() ran more than once; the count would be partial")
        totals = next(line for line in dumped.read_text().splitlines() if line.startswith("totals:"))
        return int(totals.split()[1]) / n / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--tree", action="append", default=[], type=Path, help="another checkout to count")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/condor_instructions",
                        help="scratch database URL; the n-th tree's gets the suffix _n")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.prepare:
        _set_up()
        return
    if options.child:
        child(options.child[0], int(options.child[1]))
        return
    paths = [path for path in options.paths.split(",") if path]
    unknown = set(paths) - set(PATHS)
    if unknown:
        raise SystemExit(f"unknown paths: {sorted(unknown)}")
    trees = [ROOT, *(tree.resolve() for tree in options.tree)]
    print(f"load average {os.getloadavg()}; {options.requests} requests a path")
    jobs = [(t, path) for path in paths for t in range(len(trees))]
    with ThreadPoolExecutor(options.jobs) as pool:
        figures = dict(zip(jobs, pool.map(
            lambda job: count(trees[job[0]], job[1], options.requests, f"{options.database}_{job[0]}"), jobs)))
    for path in paths:
        reference = figures[(0, path)]
        for t, tree in enumerate(trees):
            ratio = "" if t == 0 else f"  ({figures[(t, path)] / reference:.3f}x this tree's)"
            print(f"  {path:9s} {figures[(t, path)]:7.3f} M instructions a request  {tree}{ratio}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
