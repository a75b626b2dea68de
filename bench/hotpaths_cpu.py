"""CPU per request on the four hot paths, in process, through the WSGI application (issue 11).

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_h1_bench REDIS_URL=redis://127.0.0.1:6379/1 \
        .venv/bin/python bench/hotpaths_cpu.py [--requests 200] [--profile gate|suspend|decision|resume]

Each request is a WSGI environ handed to `condor.wsgi.application`, the object gunicorn
calls: every middleware, DRF's authentication, permission, throttle, parser and
renderer, the service and its transaction, the after-commit hand-over of the push.
What gunicorn adds (reading the socket, parsing HTTP) is left out. Per request it
prints the process CPU time (all threads, so the push thread's work counts while a
request is measured) and the wall time, median and p90; CPU time moves much less with
the machine's load than wall time does.
`--profile PATH` runs cProfile over that path's requests and prints the top functions
(`--cpu`: timed by the thread's CPU clock, so waits on PostgreSQL and Redis drop out).
`--dump FILE` also writes that profile in pstats format, to ask it for callers afterwards.

`--compare-push [--rounds 5]` measures gate allow's wall time only, request by request
alternating between the request waiting for its own push (what it did before the push
queue: push and mark in the request, as when the push finished inside its 200 ms
wait) and the push queue (runs/push_queue.py), the load average printed per round.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
from bench.scratch_db import ensure_database, setup_django  # noqa: E402

READ = {"patient_id": "p-1042"}
PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}


class Wsgi:
    """Calls the WSGI application as gunicorn would, minus the socket."""

    def __init__(self, headers: dict[str, str], cookies: dict[str, str] | None = None):
        from condor.wsgi import application

        self.application = application
        self.headers = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
        if cookies:
            self.headers["HTTP_COOKIE"] = "; ".join(f"{name}={value}" for name, value in cookies.items())

    def post(self, path: str, body: dict, status: int) -> dict:
        raw = json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1", "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(raw)),
            "HTTP_HOST": "127.0.0.1:8000", "wsgi.input": io.BytesIO(raw), "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": True,
            "wsgi.run_once": False, "wsgi.version": (1, 0), **self.headers,
        }
        answer = {}

        def start_response(status_line, headers, exc_info=None):
            answer["status"] = int(status_line.split()[0])

        chunks = self.application(environ, start_response)
        try:
            content = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()  # request_finished: the connection goes back to the pool
        if answer["status"] != status:
            raise SystemExit(f"{path}: {answer['status']} {content[:300]!r}")
        return json.loads(content)


def actors():
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.backends.db import SessionStore
    from django.middleware.csrf import _get_new_csrf_string
    from django.utils.module_loading import import_string

    from approvals.models import ApiClient, ApiClientKey
    from approvals.registry import seed_static_catalog

    seed_static_catalog()
    tag = time.time_ns()
    client = ApiClient.objects.create(name=f"bench-cpu-{tag}")
    _, key = ApiClientKey.objects.create_key(name="bench", client=client)
    reviewer = User.objects.create(username=f"bench-cpu-rita-{tag}")
    reviewer.groups.add(Group.objects.get(name="reviewers"))
    store = SessionStore()
    store[SESSION_KEY] = str(reviewer.pk)
    store[BACKEND_SESSION_KEY] = next(path for path in settings.AUTHENTICATION_BACKENDS
                                      if hasattr(import_string(path), "get_user"))
    store[HASH_SESSION_KEY] = reviewer.get_session_auth_hash()
    store.save()
    token = _get_new_csrf_string()
    agent = Wsgi({"Authorization": f"Api-Key {key}"})
    browser = Wsgi({"X-CSRFToken": token, "Referer": "http://127.0.0.1:8000/inbox/"},
                   {settings.SESSION_COOKIE_NAME: store.session_key, settings.CSRF_COOKIE_NAME: token})
    return agent, browser


def executing_run(agent: Wsgi) -> str:
    session = agent.post("/api/v1/sessions/", {}, 201)
    run = agent.post(f"/api/v1/sessions/{session['id']}/runs/", {}, 201)
    agent.post(f"/api/v1/runs/{run['id']}/transition/", {"to": "executing"}, 200)
    return run["id"]


def gate_call(tool_call_id: str, *, allowed: bool, days: int = 7) -> dict:
    if allowed:
        return {"tool_call_id": tool_call_id, "step_id": "s", "tool": "get_patient_summary", "op": "",
                "args": READ}
    return {"tool_call_id": tool_call_id, "step_id": "s", "tool": "prescribe_medication", "op": "create",
            "args": {**PRESCRIPTION, "days": days}}


def measure(requests, profiler=None) -> dict:
    cpu, wall = [], []
    for send in requests:
        started_cpu, started = time.process_time(), time.perf_counter()
        if profiler is not None:
            profiler.enable()
        send()
        if profiler is not None:
            profiler.disable()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    cpu.sort()
    wall.sort()
    p90 = int(len(cpu) * 0.9)
    return {"cpu_ms": statistics.median(cpu) * 1000, "cpu_p90_ms": cpu[p90] * 1000,
            "cpu_mean_ms": statistics.fmean(cpu) * 1000,
            "wall_ms": statistics.median(wall) * 1000, "wall_p90_ms": wall[p90] * 1000}


def compare_push(agent: Wsgi, rounds: int, requests: int) -> None:
    """Gate allow's wall time: the request waiting for its push against the push queue, interleaved.

    Request by request, the two modes alternate (which goes first alternates too), and
    the queue is flushed, untimed, after every request: each request's wall time is
    what its client waits, with no earlier push still being worked on beside it.
    Beside it, the time the after-commit hook held the request: the push and its mark
    when waiting, the hand-over when queueing.
    """
    from runs import outbox
    from runs.publish import flush, publish

    modes = {"wait": publish, "queue": outbox.publish_later}
    hook_times: list[float] = []

    def timed(push):
        def hook(events):
            started = time.perf_counter()
            push(events)
            hook_times.append(time.perf_counter() - started)
        return hook

    medians: dict[str, list[float]] = {mode: [] for mode in modes}
    hooks: dict[str, list[float]] = {mode: [] for mode in modes}
    print("round  load 1 min | wait: wall p50 / p90, hook p50 (ms) | queue: wall p50 / p90, hook p50 (ms) | wall ratio")
    try:
        for round_ in range(1, rounds + 1):
            load = os.getloadavg()[0]
            runs = {mode: executing_run(agent) for mode in modes}
            walls: dict[str, list[float]] = {mode: [] for mode in modes}
            hooked: dict[str, list[float]] = {mode: [] for mode in modes}
            tag = f"{round_}-{time.time_ns()}"
            for i in range(requests):
                for mode in (("wait", "queue") if i % 2 == 0 else ("queue", "wait")):
                    outbox.publish_later = timed(modes[mode])
                    hook_times.clear()
                    started = time.perf_counter()
                    agent.post(f"/api/v1/runs/{runs[mode]}/tool-calls/",
                               gate_call(f"{tag}-{mode}-{i}", allowed=True), 200)
                    walls[mode].append(time.perf_counter() - started)
                    hooked[mode].extend(hook_times)
                    flush()
            figures = {}
            for mode in modes:
                ordered = sorted(walls[mode])
                figures[mode] = (statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.9)] * 1000,
                                 statistics.median(hooked[mode]) * 1000)
                medians[mode].append(figures[mode][0])
                hooks[mode].append(figures[mode][2])
            (wait, wait_p90, wait_hook), (queue, queue_p90, queue_hook) = figures["wait"], figures["queue"]
            print(f"{round_:5}  {load:10.1f} | {wait:11.2f} / {wait_p90:6.2f}, {wait_hook:5.2f}        | "
                  f"{queue:12.2f} / {queue_p90:6.2f}, {queue_hook:5.2f}         | {queue / wait:5.2f}")
    finally:
        outbox.publish_later = modes["queue"]
    wait, queue = statistics.median(medians["wait"]), statistics.median(medians["queue"])
    print(f"median of the rounds' p50: wall wait {wait:.2f} ms, queue {queue:.2f} ms ({queue / wait:.2f}×); "
          f"hook wait {statistics.median(hooks['wait']):.2f} ms, queue {statistics.median(hooks['queue']):.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per path")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--profile", choices=["gate", "suspend", "decision", "resume"])
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--cpu", action="store_true", help="profile CPU time (thread clock), not wall time")
    parser.add_argument("--dump", metavar="FILE", help="also write the profile to FILE (pstats format)")
    parser.add_argument("--compare-push", action="store_true",
                        help="gate allow's wall time, waiting for its push vs the push queue, interleaved")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --compare-push")
    options = parser.parse_args()
    ensure_database(os.environ["DATABASE_URL"])
    setup_django()
    agent, browser = actors()
    print(f"load average {os.getloadavg()}")
    if options.compare_push:
        warm_run = executing_run(agent)
        for i in range(options.warmup):
            agent.post(f"/api/v1/runs/{warm_run}/tool-calls/", gate_call(f"warm-{i}", allowed=True), 200)
        compare_push(agent, options.rounds, options.requests)
        print(f"load average {os.getloadavg()}")
        return
    for phase, n in (("warm-up", options.warmup), ("measured", options.requests)):
        tag = f"{phase[0]}{time.time_ns()}"
        run_id = executing_run(agent)
        parked_run = executing_run(agent)
        gate = [lambda i=i: agent.post(f"/api/v1/runs/{run_id}/tool-calls/",
                                       gate_call(f"{tag}-a{i}", allowed=True), 200) for i in range(n)]
        approvals = []

        def suspend_one(i):
            body = agent.post(f"/api/v1/runs/{parked_run}/tool-calls/",
                              gate_call(f"{tag}-s{i}", allowed=False, days=i + 1), 202)
            approvals.append((body["approval"]["id"], {**PRESCRIPTION, "days": i + 1}))

        suspend = [lambda i=i: suspend_one(i) for i in range(n)]
        decision = [lambda i=i: browser.post(f"/api/v1/approvals/{approvals[i][0]}/decision/",
                                             {"approved": True}, 200) for i in range(n)]
        resume = [lambda i=i: agent.post(f"/api/v1/runs/{parked_run}/resume/",
                                         {"approval_id": approvals[i][0], "args": approvals[i][1]}, 200)
                  for i in range(n)]
        results = {}
        for name, requests in (("gate", gate), ("suspend", suspend), ("decision", decision), ("resume", resume)):
            profiler = None
            if phase == "measured" and options.profile == name:
                # Timed by the thread's CPU clock: waits on PostgreSQL and Redis do not count.
                profiler = cProfile.Profile(time.thread_time) if options.cpu else cProfile.Profile()
            results[name] = measure(requests, profiler)
            if profiler is not None:
                if options.dump:
                    profiler.dump_stats(options.dump)
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats(options.sort).print_stats(options.top)
                profiled = out.getvalue()
        if phase == "measured":
            for name, figures in results.items():
                print(f"  {name:9} CPU {figures['cpu_ms']:5.2f} ms (p90 {figures['cpu_p90_ms']:5.2f}, "
                      f"mean {figures['cpu_mean_ms']:5.2f})  wall {figures['wall_ms']:5.2f} ms "
                      f"(p90 {figures['wall_p90_ms']:5.2f})")
            if options.profile:
                print(profiled)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
