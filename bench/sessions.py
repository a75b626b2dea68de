"""Sessions surface: list a client's sessions, and the history of a long session.

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_sessions .venv/bin/python bench/sessions.py

Seeds (once; re-runs reuse them) one client with 10,000 sessions and 100,000
messages spread over them, plus one session of 500 messages whose runs carry
gated calls (allowed, approved, rejected). Then times, in this process through
Django's test client (the whole request path: middleware, API-key auth, view,
serializer; no socket), `GET sessions/` (first page and a page deep in the
cursor) and `GET sessions/{id}/history/`, and counts each request's queries; beside them,
as a reference taken in the same run, the history of a 10-message session.
Figures: server time p50 / p99 per request, this thread's CPU time per request
(p50, and p99 / p50), queries per request (target: ≤ 50 ms a page), and the full
garbage collections that ran during each path's requests with their CPU time.

The process is set up as the entry points set up a server (condor/wsgi.py and
condor/asgi.py freeze the start-up heap and raise the youngest generation's GC
threshold: condor/gc_settings.py); `--no-freeze` measures without that, for comparison.

`--against REV` adds a row: the same 500-message history built by runs/session_history.py
as it was at the git revision REV (loaded from `git show`, swapped into the view for its
requests), taking turns with today's in the same round-robin, after a check that both
give the same JSON. Per history builder it also prints the allocations' peak (tracemalloc,
a few builds outside the timed loop).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")
from bench.scratch_db import ensure_database, setup_django  # noqa: E402

CLIENT_NAME = "bench-sessions"


def seed(sessions_count: int = 10_000, messages: int = 100_000, long_messages: int = 500):
    from django.utils import timezone

    from agents.models import ApiClient, ApiClientKey
    from runs import frames
    from runs.models import Run, RunEvent
    from sessions_app.models import Message, Session

    client = ApiClient.objects.filter(name=CLIENT_NAME).first()
    if client is None:
        client = ApiClient.objects.create(name=CLIENT_NAME)
        sessions = Session.objects.bulk_create(
            (
                Session(client=client, title=f"Ward round {n}", patient_ref=f"MRN-{n % 997}", care_unit=f"Unit {n % 7}")
                for n in range(sessions_count)
            ),
            batch_size=2000,
        )
        Message.objects.bulk_create(
            (
                Message(
                    session=sessions[n % sessions_count],
                    role="user" if n % 2 else "assistant",
                    parts=[{"type": "text", "text": f"message {n}"}],
                )
                for n in range(messages)
            ),
            batch_size=5000,
        )
        long = Session.objects.create(client=client, title="bench: long conversation")
        now = timezone.now()
        for turn in range(long_messages // 2):
            run = Run.objects.create(
                session=long,
                autonomy="guarded",
                state="completed",
                terminal_reason="completed",
                last_activity_at=now,
                closed_at=now,
            )
            Message.objects.create(session=long, role="user", parts=[{"type": "text", "text": f"ask {turn}"}])
            Message.objects.create(
                session=long, role="assistant", run_id=run.pk, parts=[{"type": "text", "text": f"answer {turn}"}]
            )
            call = f"call-{turn}"
            chunks = frames.suspend_frames(
                approval_id=f"a-{turn}",
                tool_call_id=call,
                tool_name="prescribe",
                input={"drug": "amoxicillin"},
                reason_code="approval",
            )
            RunEvent.objects.create(run=run, kind="approval.requested", frames=chunks, published_at=now)
            decided = frames.decision_frames(
                approval_id=f"a-{turn}",
                tool_call_id=call,
                approved=turn % 3 != 0,
                reason="ok",
                args={"drug": "amoxicillin"},
                payload_hash="0" * 64,
            )
            RunEvent.objects.create(run=run, kind="approval.decided", frames=decided, published_at=now)
            if turn % 3:
                RunEvent.objects.create(
                    run=run, kind="tool.result", published_at=now, frames=frames.result_frames(call, {"order": turn})
                )
    ApiClientKey.objects.filter(client=client).delete()
    _, key = ApiClientKey.objects.create_key(name="bench", client=client)
    from sessions_app.models import Session as S

    long_id = S.objects.get(client=client, title="bench: long conversation").pk
    short_id = S.objects.get(client=client, title="Ward round 0").pk
    return key, long_id, short_id


def measure(http, key, rows, repeat):
    """Per row (label, path, history builder or None): p50 and p99 of server time, p50 and p99 of this
    thread's CPU time, p99 of the garbage collector's CPU time in a request, the collections of each
    generation during its requests, the full ones' CPU ms each, and queries; taken round-robin so that
    a load spike hits them all alike. A row's builder is the history view's for its requests."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from runs import session_views

    ours = session_views.history_json
    collected, started_at = [], [0.0]

    def on_gc(phase, info):  # each collection's generation and CPU time
        if phase == "start":
            started_at[0] = time.thread_time()
        else:
            collected.append((info["generation"], (time.thread_time() - started_at[0]) * 1000))

    labels = [label for label, _, _ in rows]
    times, cpus, queries, last = ({r: [] for r in labels}, {r: [] for r in labels}, {r: 0 for r in labels}, {})
    gc_cpu, full_collections = {r: [] for r in labels}, {r: [] for r in labels}
    generations = {r: [0, 0, 0] for r in labels}
    gc.callbacks.append(on_gc)
    try:
        for _ in range(repeat):
            for label, path, builder in rows:
                session_views.history_json = builder or ours
                collected.clear()
                with CaptureQueriesContext(connection) as captured:
                    started, cpu = time.perf_counter(), time.thread_time()
                    response = http.get(path, HTTP_AUTHORIZATION=f"Api-Key {key}")
                    times[label].append((time.perf_counter() - started) * 1000)
                    cpus[label].append((time.thread_time() - cpu) * 1000)
                assert response.status_code == 200, response.content[:200]
                queries[label], last[label] = max(queries[label], len(captured.captured_queries)), response
                gc_cpu[label].append(sum(ms for _, ms in collected))
                full_collections[label].extend(ms for generation, ms in collected if generation == 2)
                for generation, _ in collected:
                    generations[label][generation] += 1
    finally:
        gc.callbacks.remove(on_gc)
        session_views.history_json = ours

    def p99(values):
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]

    return {
        label: {
            "p50": statistics.median(times[label]),
            "p99": p99(times[label]),
            "cpu50": statistics.median(cpus[label]),
            "cpu99": p99(cpus[label]),
            "queries": queries[label],
            "gc99": p99(gc_cpu[label]),
            "full_gc": full_collections[label],
            "generations": generations[label],
            "response": last[label],
        }
        for label in labels
    }


def history_at(rev: str):
    """runs/session_history.py as it was at the git revision `rev`, loaded as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:runs/session_history.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(f"history_at_{rev}")
    exec(compile(source, f"{rev}:runs/session_history.py", "exec"), module.__dict__)
    return module.history_json


def allocation_peak(builder, session, builds=5) -> float:
    """The highest tracemalloc peak (KiB) over a few builds of the history, outside the timed loop."""
    peaks = []
    for _ in range(builds):
        tracemalloc.start()
        builder(session)
        peaks.append(tracemalloc.get_traced_memory()[1] / 1024)
        tracemalloc.stop()
    return max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument(
        "--no-freeze",
        action="store_true",
        help="leave the collector as Python sets it (the servers freeze the start-up heap and "
        "raise the youngest generation's threshold: condor/gc_settings.py)",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="also time the history as runs/session_history.py built it at this git revision, in turns with today's",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="120 sessions, a history of 20 messages, 3 requests each: checks the bench still runs",
    )
    args = parser.parse_args()
    sizes, pages_in = (10_000, 100_000, 500), 20
    if args.smoke:
        sizes, pages_in, args.repeat = (120, 600, 20), 1, 3
    url = os.environ.get("DATABASE_URL")
    if not url:
        sys.exit("set DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_sessions")
    ensure_database(url)
    setup_django()
    from django.test import Client

    key, long_id, short_id = seed(*sizes)
    from runs.session_history import history_json
    from sessions_app.models import Session

    builders = {"today's": history_json}
    if args.against:
        builders[args.against] = history_at(args.against)
    long_session = Session.objects.get(pk=long_id)
    documents = {name: json.loads(build(long_session)) for name, build in builders.items()}
    assert all(document == documents["today's"] for document in documents.values()), "the builders differ"
    if not args.no_freeze:
        from condor.gc_settings import configure_gc_for_serving

        configure_gc_for_serving()  # as condor/wsgi.py and condor/asgi.py do
    http = Client(HTTP_HOST="localhost")
    first = http.get("/api/v1/sessions/?limit=50", HTTP_AUTHORIZATION=f"Api-Key {key}")
    deep = first.json()["next"]
    for _ in range(pages_in):  # walk pages in
        deep = http.get(deep, HTTP_AUTHORIZATION=f"Api-Key {key}").json()["next"]
    history = f"/api/v1/sessions/{long_id}/history/"
    rows = [
        ("GET sessions/ (first page of 50)", "/api/v1/sessions/?limit=50", None),
        (f"GET sessions/ (page {pages_in + 1} by cursor)", deep, None),
        ("GET sessions/?care_unit=Unit 3&q=round", "/api/v1/sessions/?care_unit=Unit%203&q=round&limit=50", None),
        (f"GET sessions/{{id}}/history/ ({sizes[2]} messages)", history, None),
        *[(f"same, built as at {name}", history, build) for name, build in builders.items() if name != "today's"],
        # The reference: the same endpoint on a 10-message session, the request path's own cost
        # on this machine in this run (the figures above swing with the load; the gap does less).
        (
            f"GET sessions/{{id}}/history/ ({sizes[1] // sizes[0]} messages, reference)",
            f"/api/v1/sessions/{short_id}/history/",
            None,
        ),
    ]
    load = os.getloadavg()[0]
    figures = measure(http, key, rows, args.repeat)
    print(
        f"load {load:.1f} → {os.getloadavg()[0]:.1f}; {args.repeat} requests each, round-robin; "
        f"start-up heap {'left to the collector' if args.no_freeze else 'frozen'} ({gc.get_freeze_count()} objects), "
        f"GC thresholds {gc.get_threshold()}"
    )
    print(
        "| request | p50 | p99 | CPU p50 | CPU p99 / p50 | GC CPU p99 | collections gen 0/1/2 "
        "| full GCs (CPU ms each, max) | queries |"
    )
    for label, _, _ in rows:
        f = figures[label]
        full = f"{len(f['full_gc'])} ({max(f['full_gc']):.0f})" if f["full_gc"] else "0"
        print(
            f"| {label} | {f['p50']:.1f} ms | {f['p99']:.1f} ms | {f['cpu50']:.1f} ms | {f['cpu99'] / f['cpu50']:.2f} "
            f"| {f['gc99']:.1f} ms | {'/'.join(map(str, f['generations']))} | {full} | {f['queries']} |"
        )
    long, short = figures[rows[3][0]], figures[rows[-1][0]]
    print(
        f"history of {sizes[2]} messages over the reference: +{long['p50'] - short['p50']:.1f} ms p50, "
        f"+{long['cpu50'] - short['cpu50']:.1f} ms CPU p50"
    )
    print(
        "allocation peak of one history build (tracemalloc, max of 5): "
        + "; ".join(f"{name} {allocation_peak(build, long_session):.0f} KiB" for name, build in builders.items())
    )


if __name__ == "__main__":
    main()
