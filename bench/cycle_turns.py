"""The HITL cycle over HTTP, this tree against another, in turns (issue 11).

Run by hand from the repository root, against a scratch PostgreSQL database:

    git worktree add /tmp/before <commit> && ln -s "$PWD/.venv" /tmp/before/.venv
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_turns REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python bench/cycle_turns.py --tree /tmp/before [--blocks 20] [--cycles 10]

A change of a few percent in the cycle is lost between two runs of bench/hotpaths.py on
this shared machine (its rounds spread by 20% and more). Here both trees are served at
once, each by its own gunicorn (gthread, 2 workers x 4 threads, as in bench/hotpaths.py),
on the same database and Redis, and the cycles go to them in alternating blocks (A B, B A,
...), so that whatever the machine does meanwhile falls on both alike. LangGraph's cycle
(bench/hotpaths.py `langgraph_cycle`) runs a block after each pair, for the ratio the issue
sets. Both servers must sign the reviewer's session cookie alike: they share this tree's
SECRET_KEY. The two trees must have the same migrations (the database is migrated by this
one). Prints each side's medians (cycle, gate, decision, resume), their ratio, and the load
average before and after. The same commit on both sides gave 0.982 (bench/README.md, "Session
14"): read a ratio within about 2-3% of 1 as no difference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
from bench import hotpaths  # noqa: E402
from bench.scratch_db import ensure_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="the other checkout (A); this one is B")
    parser.add_argument("--blocks", type=int, default=20, help="pairs of blocks")
    parser.add_argument("--cycles", type=int, default=10, help="cycles a block")
    options = parser.parse_args()
    url = os.environ["DATABASE_URL"]
    ensure_database(url)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    from django.conf import settings

    os.environ["SECRET_KEY"] = settings.SECRET_KEY
    servers = [hotpaths.serve("condor.wsgi", "condor.settings", tree=options.tree.resolve()),
               hotpaths.serve("condor.wsgi", "condor.settings")]
    try:
        sides = []
        for _, base in servers:
            condor = hotpaths.Condor(base)
            sides.append((condor, condor.agent(), condor.reviewer_http()))
        for side in sides:  # warm-up: caches, prepared statements, pools
            for i in range(options.cycles):
                hotpaths.one_cycle(*side, i)
        timed: list[list[tuple]] = [[], []]
        langgraph: list[float] = []
        print(f"load average {os.getloadavg()}", flush=True)
        for block in range(options.blocks):
            for side in ((0, 1) if block % 2 == 0 else (1, 0)):
                timed[side].extend(hotpaths.one_cycle(*sides[side], i) for i in range(options.cycles))
            langgraph.append(hotpaths.langgraph_cycle(url, options.cycles)["median_ms"])
        print(f"load average {os.getloadavg()}")
        medians = [[statistics.median(column) for column in zip(*side)] for side in timed]
        for name, figures in zip((f"A {options.tree}", "B this tree"), medians):
            print(f"{name}: cycle {figures[0]:.2f} ms (gate {figures[1]:.2f}, decision {figures[2]:.2f}, "
                  f"resume {figures[3]:.2f}); {figures[0] / statistics.median(langgraph):.2f}x LangGraph")
        print(f"B/A {medians[1][0] / medians[0][0]:.3f}; LangGraph {statistics.median(langgraph):.2f} ms "
              f"(median of {len(langgraph)} blocks)")
    finally:
        for process, _ in servers:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    main()
