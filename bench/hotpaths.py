"""Gate allow and resume under gunicorn gthread against a bare DRF one-INSERT endpoint (issue 11).

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench .venv/bin/python bench/hotpaths.py

Both servers run the same gunicorn (gthread, 2 workers x 4 threads); the client is
16 httpx threads for `--seconds` each (wrk is not installed here). Rounds are
interleaved (bare, gate, resume, bare, ...), `--rounds` times, with the load
average printed before each, because the machine is shared. Then the full HITL
cycle over HTTP (gate suspends, a reviewer approves, the agent resumes), one
client, median of `--cycles`. Bench rows stay in the database (the audit log is
append-only).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
from bench.scratch_db import ensure_database  # noqa: E402

CONNECTIONS = 16
READ = {"patient_id": "p-1042"}
PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(app: str, settings_module: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module}
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "-k", "gthread", "--workers", "2", "--threads", "4",
         "-b", f"127.0.0.1:{port}", "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    import httpx

    for _ in range(200):
        try:
            httpx.get(base + "/", timeout=1)
            return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"{app} did not start")


def hammer(requests_per_thread) -> tuple[float, float]:
    """Run each thread's request iterator to exhaustion; (requests/s, p50 ms)."""
    latencies: list[float] = []
    lock = threading.Lock()

    def worker(requests):
        mine = []
        for send in requests:
            started = time.perf_counter()
            send()
            mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(requests,)) for requests in requests_per_thread]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    return len(latencies) / elapsed, statistics.median(latencies) * 1000


def checked(response, status: int):
    if response.status_code != status:
        raise SystemExit(f"{response.request.url}: {response.status_code} {response.text[:300]}")
    return response.json()


class Condor:
    def __init__(self, base: str):
        import django

        django.setup()
        import httpx
        from django.contrib.auth.models import Group, User

        from approvals.models import ApiClient, ApiClientKey
        from approvals.registry import seed_static_catalog

        seed_static_catalog()
        client = ApiClient.objects.create(name=f"bench-{time.time_ns()}")
        _, self.key = ApiClientKey.objects.create_key(name="bench", client=client)
        self.reviewer = User.objects.create(username=f"bench-rita-{time.time_ns()}")
        self.reviewer.groups.add(Group.objects.get(name="reviewers"))
        self.base = base
        self.headers = {"Authorization": f"Api-Key {self.key}"}
        self.http = httpx.Client(base_url=base + "/api/v1", headers=self.headers, timeout=30)

    def agent(self):
        import httpx

        return httpx.Client(base_url=self.base + "/api/v1", headers=self.headers, timeout=30)

    def executing_run(self, http) -> str:
        session = checked(http.post("/sessions/", json={}), 201)
        run = checked(http.post(f"/sessions/{session['id']}/runs/", json={}), 201)
        checked(http.post(f"/runs/{run['id']}/transition/", json={"to": "executing"}), 200)
        return run["id"]

    def reviewer_http(self):
        """A browser session for the reviewer, made in-process (no password round trip)."""
        import httpx
        from django.conf import settings
        from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
        from django.contrib.sessions.backends.db import SessionStore
        from django.middleware.csrf import _get_new_csrf_string

        store = SessionStore()
        store[SESSION_KEY] = str(self.reviewer.pk)
        store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        store[HASH_SESSION_KEY] = self.reviewer.get_session_auth_hash()
        store.save()
        token = _get_new_csrf_string()
        http = httpx.Client(base_url=self.base + "/api/v1", timeout=30,
                            headers={"X-CSRFToken": token, "Referer": self.base + "/inbox/"},
                            cookies={settings.SESSION_COOKIE_NAME: store.session_key,
                                     settings.CSRF_COOKIE_NAME: token})
        return http

    def gate_requests(self, n: int, tag: str):
        http = self.agent()
        run_id = self.executing_run(http)

        def send(i):
            return lambda: checked(http.post(f"/runs/{run_id}/tool-calls/", json={
                "tool_call_id": f"{tag}-{i}", "step_id": "s", "tool": "get_patient_summary", "op": "",
                "args": READ}), 200)
        return [send(i) for i in range(n)]

    def resume_requests(self, n: int, tag: str):
        """n approvals parked in one step of one run and approved beforehand; each request resumes one."""
        from approvals import decisions

        http = self.agent()
        run_id = self.executing_run(http)
        ids = []
        for i in range(n):
            body = checked(http.post(f"/runs/{run_id}/tool-calls/", json={
                "tool_call_id": f"{tag}-{i}", "step_id": "s", "tool": "prescribe_medication", "op": "create",
                "args": {**PRESCRIPTION, "days": i + 1}}), 202)
            ids.append((body["approval"]["id"], {**PRESCRIPTION, "days": i + 1}))
        for approval_id, _ in ids:
            decisions.decide(approval_id, {"approved": True}, user=self.reviewer)

        def send(approval_id, args):
            return lambda: checked(http.post(f"/runs/{run_id}/resume/",
                                             json={"approval_id": approval_id, "args": args}), 200)
        return [send(*pair) for pair in ids]


def bare_requests(base: str, n: int):
    import httpx

    http = httpx.Client(base_url=base, timeout=30)
    return [lambda: checked(http.post("/insert/", json={"tool": "get_patient_summary", "args": READ}), 200)
            for _ in range(n)]


def hitl_cycle(condor: Condor, cycles: int) -> dict:
    agent, reviewer = condor.agent(), condor.reviewer_http()
    totals, parts = [], {"gate": [], "decision": [], "resume": []}
    for i in range(cycles):
        run_id = condor.executing_run(agent)
        started = time.perf_counter()
        body = checked(agent.post(f"/runs/{run_id}/tool-calls/", json={
            "tool_call_id": f"c{i}", "step_id": "s", "tool": "prescribe_medication", "op": "create",
            "args": PRESCRIPTION}), 202)
        gated = time.perf_counter()
        checked(reviewer.post(f"/approvals/{body['approval']['id']}/decision/", json={"approved": True}), 200)
        decided = time.perf_counter()
        checked(agent.post(f"/runs/{run_id}/resume/",
                           json={"approval_id": body["approval"]["id"], "args": PRESCRIPTION}), 200)
        done = time.perf_counter()
        totals.append(done - started)
        for name, seconds in (("gate", gated - started), ("decision", decided - gated), ("resume", done - decided)):
            parts[name].append(seconds)
    return {"median_ms": statistics.median(totals) * 1000,
            **{f"{name}_ms": statistics.median(values) * 1000 for name, values in parts.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-thread", type=int, default=40, help="requests each of the 16 threads sends")
    parser.add_argument("--cycles", type=int, default=30)
    options = parser.parse_args()
    ensure_database(os.environ["DATABASE_URL"])
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    condor_server, condor_base = serve("condor.wsgi", "condor.settings")
    bare_server, bare_base = serve("bench.bare.wsgi", "bench.bare.settings")
    try:
        import psycopg

        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            from bench.bare.urls import TABLE_SQL

            conn.execute(TABLE_SQL)
        condor = Condor(condor_base)
        figures: dict[str, list[tuple[float, float]]] = {"bare": [], "gate": [], "resume": []}
        for round_ in range(options.rounds):
            print(f"round {round_ + 1}: load average {os.getloadavg()}")
            n = options.per_thread
            figures["bare"].append(hammer([bare_requests(bare_base, n) for _ in range(CONNECTIONS)]))
            figures["gate"].append(hammer([condor.gate_requests(n, f"g{round_}-{t}") for t in range(CONNECTIONS)]))
            prepared = [condor.resume_requests(n // 4, f"r{round_}-{t}") for t in range(CONNECTIONS)]
            figures["resume"].append(hammer(prepared))
            for name, values in figures.items():
                rate, p50 = values[-1]
                print(f"  {name:7} {rate:7.1f} req/s  p50 {p50:6.1f} ms")
        best = {name: max(rate for rate, _ in values) for name, values in figures.items()}
        print(f"best of {options.rounds}: bare {best['bare']:.0f} req/s, gate allow {best['gate']:.0f} "
              f"({best['gate'] / best['bare']:.2f}x), resume {best['resume']:.0f} ({best['resume'] / best['bare']:.2f}x)")
        print(f"load average {os.getloadavg()}")
        cycle = hitl_cycle(condor, options.cycles)
        print("HITL cycle over HTTP, one client: " + ", ".join(f"{k} {v:.1f}" for k, v in cycle.items()))
    finally:
        for server in (condor_server, bare_server):
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
