"""Run spine throughput: open → transition → close cycles per second, over HTTP vs bare ORM writes.

Run by hand from the repository root, against PostgreSQL:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench .venv/bin/python bench/spine.py

The database is created and migrated if needed. Three figures, same workload:

- **http**: gunicorn (sync workers) serving condor.wsgi on 127.0.0.1, started here and
  stopped at the end; one sequential client posts `sessions/{id}/runs/`, `runs/{id}/transition/`
  `{to: executing}`, `runs/{id}/close/` `{reason: completed}` per cycle, a bounded number of times.
- **services**: the same cycle calling runs/spine.py in this process (locks, outbox
  events, audit entry, after-commit publish), without HTTP, auth or serializers.
- **orm**: the same three writes as bare ORM statements (insert the run, update its
  state, update it to closed), one autocommit each: the floor the spine is paid for.

Rounds of the three paths are interleaved (http, services, orm, http, …) so a busy
machine slows all three alike; each figure is the best of `--rounds`. Bench rows are
left in the database (the audit log is append-only): point DATABASE_URL at a scratch
database.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
from bench.scratch_db import ensure_database  # noqa: E402
# The server's request logging would be the loudest part of the benchmark.
os.environ.setdefault("LOG_LEVEL", "WARNING")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Api:
    """A JSON client for one agent key (reconnects by itself when the server closes)."""

    def __init__(self, port: int, key: str):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Authorization": f"Api-Key {key}", "Content-Type": "application/json"}
        self.requests = 0

    def call(self, method: str, path: str, body: dict | None = None, expect: int = 200) -> dict:
        self.conn.request(method, "/api/v1/" + path, json.dumps(body) if body is not None else None, self.headers)
        response = self.conn.getresponse()
        payload = response.read()
        self.requests += 1
        if response.status != expect:
            raise RuntimeError(f"{method} {path} → {response.status}: {payload[:300]!r}")
        return json.loads(payload)

    def close(self) -> None:
        self.conn.close()


def start_server(port: int, worker_class: str, workers: int, threads: int) -> subprocess.Popen:
    # Sync workers by default: on loopback, gthread's keep-alive path measured 2-4x
    # slower per request than a fresh connection to a sync worker.
    command = [str(ROOT / ".venv" / "bin" / "gunicorn"), "condor.wsgi:application",
               "--bind", f"127.0.0.1:{port}", "--worker-class", worker_class, "--workers", str(workers),
               "--log-level", "warning"]
    if worker_class == "gthread":
        command += ["--threads", str(threads), "--keep-alive", "30"]
    server = subprocess.Popen(command, cwd=ROOT, env=os.environ.copy())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"gunicorn exited with {server.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    sys.exit("gunicorn did not start listening within 30 s")


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def http_cycles(api: Api, session_id: str, cycles: int) -> list[float]:
    laps = []
    for _ in range(cycles):
        started = time.perf_counter()
        run = api.call("POST", f"sessions/{session_id}/runs/", {}, expect=201)
        api.call("POST", f"runs/{run['id']}/transition/", {"to": "executing"})
        closed = api.call("POST", f"runs/{run['id']}/close/", {"reason": "completed"})
        laps.append(time.perf_counter() - started)
        assert closed["state"] == "completed"
    return laps


def service_cycles(session, client, cycles: int) -> list[float]:
    from runs import spine

    laps = []
    for _ in range(cycles):
        started = time.perf_counter()
        run = spine.open_run(session)
        spine.transition(run.pk, "executing")
        spine.close(run.pk, "completed", actor_client=client)
        laps.append(time.perf_counter() - started)
    return laps


def orm_cycles(session, cycles: int) -> list[float]:
    from django.utils import timezone

    from runs.models import Run

    laps = []
    for _ in range(cycles):
        started = time.perf_counter()
        run = Run.objects.create(session=session, autonomy=session.autonomy, last_activity_at=timezone.now())
        Run.objects.filter(pk=run.pk).update(state="executing", last_activity_at=timezone.now())
        now = timezone.now()
        Run.objects.filter(pk=run.pk).update(state="completed", terminal_reason="completed", closed_at=now,
                                             last_activity_at=now)
        laps.append(time.perf_counter() - started)
    return laps


def summary(name: str, rounds: list[list[float]]) -> dict:
    best = min(rounds, key=sum)
    return {
        "name": name,
        "cycles_per_s": len(best) / sum(best),
        "p50_ms": statistics.median(best) * 1000,
        "p95_ms": statistics.quantiles(best, n=20)[18] * 1000 if len(best) >= 20 else max(best) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=300, help="timed cycles per round (3 requests each)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--worker-class", choices=["sync", "gthread"], default="sync")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=2, help="threads per gthread worker")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL")
    if not url:
        sys.exit("set DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench")
    ensure_database(url)

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from approvals.models import ApiClient, ApiClientKey
    from sessions_app.models import Session

    call_command("migrate", verbosity=0, interactive=False)
    load_before = os.getloadavg()[0]
    client = ApiClient.objects.create(name=f"bench-spine-{os.getpid()}-{int(time.time())}")
    _, key = ApiClientKey.objects.create_key(name="bench", client=client)

    service_session = Session.objects.create(client=client, title="bench: services")
    orm_session = Session.objects.create(client=client, title="bench: orm")
    http_rounds, service_rounds, orm_rounds = [], [], []
    port = free_port()
    server = start_server(port, args.worker_class, args.workers, args.threads)
    api = Api(port, key)
    try:
        session_id = api.call("POST", "sessions/", {"title": "bench: http"}, expect=201)["id"]
        http_cycles(api, session_id, args.warmup)
        service_cycles(service_session, client, args.warmup)
        orm_cycles(orm_session, args.warmup)
        for _ in range(args.rounds):
            http_rounds.append(http_cycles(api, session_id, args.cycles))
            service_rounds.append(service_cycles(service_session, client, args.cycles))
            orm_rounds.append(orm_cycles(orm_session, args.cycles))
    finally:
        api.close()
        stop_server(server)
    # Bounded by construction: exactly this many requests were sent, then the server stopped.
    expected_requests = 1 + 3 * (args.warmup + args.cycles * args.rounds)
    assert api.requests == expected_requests, (api.requests, expected_requests)

    results = [summary("http (gunicorn, API key, DRF)", http_rounds),
               summary("services (runs/spine.py in process)", service_rounds),
               summary("orm (3 bare writes)", orm_rounds)]
    orm_rate = results[2]["cycles_per_s"]

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = cursor.fetchone()[0]
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs "
          f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after); "
          f"PostgreSQL {pg_version}; channel layer {layer}")
    server_shape = f"{args.workers} sync"
    if args.worker_class == "gthread":
        server_shape = f"{args.workers}x{args.threads} gthread"
    print(f"gunicorn {server_shape} workers, one sequential client; "
          f"{args.cycles} cycles x {args.rounds} rounds (best round), {args.warmup} warm-up; "
          f"{api.requests} HTTP requests in all")
    print(f"{'path':40} {'cycles/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'x orm':>7}")
    for row in results:
        print(f"{row['name']:40} {row['cycles_per_s']:9.1f} {row['p50_ms']:8.2f} {row['p95_ms']:8.2f} "
              f"{orm_rate / row['cycles_per_s']:7.1f}")
    print(f"ratio http/orm: {results[0]['cycles_per_s'] / orm_rate:.3f} "
          f"(the orm path is {orm_rate / results[0]['cycles_per_s']:.1f}x faster)")


if __name__ == "__main__":
    main()
