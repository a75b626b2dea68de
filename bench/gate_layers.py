"""Where a gate allow's CPU goes, layer by layer, in process, against the bare endpoint's (issue 11).

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench REDIS_URL=redis://127.0.0.1:6379/0 \
        .venv/bin/python bench/gate_layers.py [--rounds 6] [--requests 150]

Each request goes through a WSGI application as gunicorn would call it (bench/hotpaths_cpu.py's
`Wsgi`), timed by the process's CPU clock (which counts the push thread's work meanwhile) and by
the request thread's. Four kinds, in turns, `--rounds` blocks of each:

- `bare`: bench/bare's one-INSERT DRF view (no authentication, no middleware), in a process
  of its own, since it has settings of its own;
- `stack`: Condor's gate endpoint with its validation and its service replaced by stand-ins
  (a measuring hack, here only): every middleware, the API key, the throttle's counter, the
  strict JSON parser, DRF and the answer's rendering, with no statement sent;
- `validated`: the same with the body validated as the gate validates it;
- `gate`: the whole gate allow (the lock, the policy, the audit row, the ledger, the outbox event).

The differences are what each layer costs: `gate - validated` is the gate's service, its
statements included. What a request costs PostgreSQL is not in these figures (another process).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BARE_BODY = {"tool_call_id": "x", "step_id": "s", "tool": "get_patient_summary", "op": "",
             "args": {"patient_id": "p-1042"}}


def _cpu_ms(send, n: int) -> tuple[float, float]:
    """The median CPU time of `n` calls of `send`, in ms: the process's (the push thread's work
    meanwhile included), and the calling thread's alone."""
    process, thread = [], []
    for i in range(n):
        started, started_thread = time.process_time(), time.thread_time()
        send(i)
        process.append(time.process_time() - started)
        thread.append(time.thread_time() - started_thread)
    return statistics.median(process) * 1000, statistics.median(thread) * 1000


def bare_child(n: int) -> None:
    """In a process of its own (bench.bare.settings): print the bare endpoint's median CPU a request."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.bare.settings"
    from django.db import connection

    from bench.bare.urls import TABLE_SQL
    from bench.bare.wsgi import application
    from bench.hotpaths_cpu import Wsgi

    with connection.cursor() as cursor:
        cursor.execute(TABLE_SQL)
    bare = Wsgi.__new__(Wsgi)  # its constructor loads Condor's application; this one is bare's
    bare.application, bare.headers = application, {}
    for i in range(20):  # warm-up: connection, plans
        bare.post("/insert/", BARE_BODY, 200)
    print(json.dumps(_cpu_ms(lambda i: bare.post("/insert/", BARE_BODY, 200), n)))  # [process, thread]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--requests", type=int, default=150, help="requests a kind a round")
    parser.add_argument("--bare-child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.bare_child:
        bare_child(options.requests)
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
    from bench.scratch_db import ensure_database, setup_django

    ensure_database(os.environ["DATABASE_URL"])
    setup_django()
    from approvals import views
    from approvals.gate import GateResult
    from bench.hotpaths_cpu import actors, executing_run, gate_call
    from runs.publish import flush

    def stand_in_service(run_id, call, *, client, owned_by):
        return GateResult(200, {"decision": "allow", "rule_id": "read.allow", "explanation": "",
                                "tool_call_id": call.tool_call_id, "args": call.args})

    def stand_in_validation(request, run_id, serializer_class):
        body = request.data
        return {name: body.get(name, {}) for name in ("tool_call_id", "step_id", "tool", "op", "args", "metadata")}

    real = (views.gate_tool_call, views.validated_for_owned_run)
    kinds = {"stack": (stand_in_service, stand_in_validation), "validated": (stand_in_service, real[1]),
             "gate": real}
    agent, _ = actors()
    runs = [executing_run(agent) for _ in range(4)]
    figures: dict[str, list[tuple[float, float]]] = {"bare": [], **{kind: [] for kind in kinds}}
    sent = 0

    def gate_request(i):
        nonlocal sent
        sent += 1
        agent.post(f"/api/v1/runs/{runs[sent % 4]}/tool-calls/", gate_call(f"layers-{time.time_ns()}-{sent}",
                                                                             allowed=True), 200)

    print(f"load average {os.getloadavg()}")
    try:
        for kind, (service, validation) in kinds.items():  # warm-up, untimed
            views.gate_tool_call, views.validated_for_owned_run = service, validation
            for i in range(20):
                gate_request(i)
        for round_ in range(options.rounds):
            child = subprocess.run([sys.executable, __file__, "--bare-child", "--requests", str(options.requests)],
                                   cwd=ROOT, check=True, capture_output=True, text=True)
            figures["bare"].append(tuple(json.loads(child.stdout.strip().splitlines()[-1])))
            order = list(kinds.items())
            if round_ % 2:
                order.reverse()
            for kind, (service, validation) in order:
                views.gate_tool_call, views.validated_for_owned_run = service, validation
                figures[kind].append(_cpu_ms(gate_request, options.requests))
                flush()  # the round's pushes, untimed
            print(f"round {round_ + 1}: load {os.getloadavg()[0]:.1f}  " + "  ".join(
                f"{kind} {values[-1][0]:.3f}/{values[-1][1]:.3f}" for kind, values in figures.items()), flush=True)
    finally:
        views.gate_tool_call, views.validated_for_owned_run = real
    for at, clock in enumerate(("the process's", "the request thread's")):
        medians = {kind: statistics.median(value[at] for value in values) for kind, values in figures.items()}
        print(f"median CPU a request by {clock} clock (ms): " +
              ", ".join(f"{kind} {value:.3f}" for kind, value in medians.items()))
        print(f"  layers: validation {medians['validated'] - medians['stack']:.3f}, "
              f"the gate's service {medians['gate'] - medians['validated']:.3f}, "
              f"the stack against bare {medians['stack'] - medians['bare']:+.3f}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
