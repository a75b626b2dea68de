"""Gate allow, resume and the HITL cycle against their references, side by side (issue 11).

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench .venv/bin/python bench/hotpaths.py [--inbox] [--sweep]

`--floor` (with `--client wrk`) adds a phase between the bare endpoint and the gate: the gate
allow's own statements, captured from real gate calls, sent through the bare reference with
none of Condor's Python (bench/floor.py). Its ratio is the best any gate keeping those writes
could reach. A second phase sends the same statements folded into one, in autocommit
(`floor_folded`): the best a gate with no BEGIN and COMMIT of its own could reach.

`--inbox` and `--sweep` then run the issue's other two hot paths (bench/inbox_page.py,
bench/sweep.py), each on a database of its own beside this one.

Gate allow and resume run under gunicorn (gthread, 2 workers x 4 threads) against a
bare DRF one-INSERT endpoint (bench/bare) served by the same gunicorn; the client is
16 httpx threads, or with `--client wrk` the issue's wrk (2 threads, 16 connections,
`--seconds` a phase; bench/wrk_client.py). The full HITL cycle over HTTP (gate
suspends, a reviewer approves, the agent resumes; one client) runs against
LangGraph's interrupt() / Command(resume=...) with PostgresSaver on the same
database (bench/requirements.txt), and against three bare requests in a row over the
same server and client (what the HTTP stack alone costs a three-request cycle).
Everything is interleaved (bare, gate, resume, Condor cycle, LangGraph cycle, bare
cycle; again), `--rounds` times, with the load average
printed before each round, because the machine is shared; the summary gives the
median round and the ratios. Bench rows stay in the database (the audit log is
append-only); it is vacuumed and analyzed before each round, untimed, as autovacuum
would keep it (this machine's PostgreSQL runs without autovacuum).
"""

from __future__ import annotations

import argparse
import itertools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
from bench import wrk_client  # noqa: E402
from bench.scratch_db import ensure_database, vacuum  # noqa: E402

CONNECTIONS = 16
# gunicorn closes a kept-alive connection after --keep-alive seconds (2 by default), and
# does so with a plain close(): a request the client sends on it at that moment is answered
# with a TCP reset ("Connection reset by peer"). httpx reuses an idle connection for up to
# 5 s, and a client here idles for seconds while the others prepare their requests, so the
# server must keep connections open longer than the client does: this many seconds.
CLIENT_KEEPALIVE_SECONDS = 5.0
SERVER_KEEPALIVE_SECONDS = 30
READ = {"patient_id": "p-1042"}
BARE_BODY = {"tool": "get_patient_summary", "args": READ}
PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}


def allowed_call(tool_call_id: str) -> dict:
    return {"tool_call_id": tool_call_id, "step_id": "s", "tool": "get_patient_summary", "op": "", "args": READ}


def prescription_args(i: int) -> dict:
    # A different payload each: every park is a card of its own.
    return {**PRESCRIPTION, "days": i + 1}


def park(http, run_id: str, tool_call_id: str, args: dict) -> str:
    """A prescription gated in `run_id`: parked (202); the approval's id."""
    body = checked(http.post(f"/runs/{run_id}/tool-calls/", json={
        "tool_call_id": tool_call_id, "step_id": "s", "tool": "prescribe_medication", "op": "create",
        "args": args}), 202)
    return body["approval"]["id"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(app: str, settings_module: str, *, tree: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """`app` under gunicorn as the bench runs it, from checkout `tree` (bench/cycle_turns.py serves two)."""
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module}
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "-k", "gthread", "--workers", "2", "--threads", "4",
         "--keep-alive", str(SERVER_KEEPALIVE_SECONDS), "-b", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=tree, env=env)
    base = f"http://127.0.0.1:{port}"
    import httpx

    for _ in range(200):
        try:
            httpx.get(base + "/", timeout=1)
            return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"{app} did not start from {tree}")


def http_client(base_url: str, **options):
    import httpx

    return httpx.Client(base_url=base_url, timeout=30,
                        limits=httpx.Limits(keepalive_expiry=CLIENT_KEEPALIVE_SECONDS), **options)


def hammer(requests_per_thread) -> tuple[float, float]:
    """Run each thread's request iterator to exhaustion; (requests/s, p50 ms).

    A request that fails ends the bench with the failures listed: a thread that died
    quietly would leave its requests out of the rate.
    """
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def worker(requests):
        mine = []
        try:
            for send in requests:
                started = time.perf_counter()
                send()
                mine.append(time.perf_counter() - started)
        except BaseException as failure:  # SystemExit from checked() too
            with lock:
                failures.append(repr(failure))
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(requests,)) for requests in requests_per_thread]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} of {len(threads)} client threads failed: {failures}")
    return len(latencies) / elapsed, statistics.median(latencies) * 1000


def checked(response, status: int):
    if response.status_code != status:
        raise SystemExit(f"{response.request.url}: {response.status_code} {response.text[:300]}")
    return response.json()


class Condor:
    def __init__(self, base: str):
        import django

        django.setup()
        import logging

        logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request
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
        self.http = http_client(base + "/api/v1", headers=self.headers)

    def agent(self):
        return http_client(self.base + "/api/v1", headers=self.headers)

    def executing_run(self, http) -> str:
        session = checked(http.post("/sessions/", json={}), 201)
        run = checked(http.post(f"/sessions/{session['id']}/runs/", json={}), 201)
        checked(http.post(f"/runs/{run['id']}/transition/", json={"to": "executing"}), 200)
        return run["id"]

    def reviewer_http(self):
        """A browser session for the reviewer, made in-process (no password round trip)."""
        from django.conf import settings
        from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
        from django.contrib.sessions.backends.db import SessionStore
        from django.middleware.csrf import _get_new_csrf_string
        from django.utils.module_loading import import_string

        store = SessionStore()
        store[SESSION_KEY] = str(self.reviewer.pk)
        # The backend that loads users (not the login-lockout one listed first).
        store[BACKEND_SESSION_KEY] = next(path for path in settings.AUTHENTICATION_BACKENDS
                                          if hasattr(import_string(path), "get_user"))
        store[HASH_SESSION_KEY] = self.reviewer.get_session_auth_hash()
        store.save()
        token = _get_new_csrf_string()
        http = http_client(self.base + "/api/v1",
                           headers={"X-CSRFToken": token, "Referer": self.base + "/inbox/"},
                           cookies={settings.SESSION_COOKIE_NAME: store.session_key,
                                    settings.CSRF_COOKIE_NAME: token})
        return http

    def gate_requests(self, n: int, tag: str):
        http = self.agent()
        run_id = self.executing_run(http)

        def send(i):
            return lambda: checked(http.post(f"/runs/{run_id}/tool-calls/", json=allowed_call(f"{tag}-{i}")), 200)
        return [send(i) for i in range(n)]

    def resume_requests(self, n: int, tag: str):
        """n approvals parked in one step of one run and approved beforehand; each request resumes one."""
        from approvals import decisions

        http = self.agent()
        run_id = self.executing_run(http)
        ids = [(park(http, run_id, f"{tag}-{i}", prescription_args(i)), prescription_args(i)) for i in range(n)]
        for approval_id, _ in ids:
            decisions.decide(approval_id, {"approved": True}, user=self.reviewer)

        def send(approval_id, args):
            return lambda: checked(http.post(f"/runs/{run_id}/resume/",
                                             json={"approval_id": approval_id, "args": args}), 200)
        return [send(*pair) for pair in ids]

    def gate_calls(self, runs: list[str], n: int, tag: str) -> list[tuple[str, dict]]:
        """n allowed gate calls as (path, body) for wrk, round-robin over `runs`."""
        return [(f"/api/v1/runs/{runs[i % len(runs)]}/tool-calls/", allowed_call(f"{tag}-{i}")) for i in range(n)]

    def approved_resumes(self, runs: list[str], n: int, tag: str) -> list[tuple[str, dict]]:
        """n approvals parked over `runs` (a client thread per run) and approved beforehand, as resumes for wrk.

        Round-robin over the runs, so requests next to each other seldom wait on the same run's lock.
        """
        from approvals import decisions

        by_run: dict[str, list] = {run_id: [] for run_id in runs}  # each run's resumes, in parking order

        def park_one(http, run_id, i):
            args = prescription_args(i)
            approval_id = park(http, run_id, f"{tag}-{i}", args)
            by_run[run_id].append((f"/api/v1/runs/{run_id}/resume/", {"approval_id": approval_id, "args": args}))

        # A client thread per run (each run's list is only ever appended to by its own thread).
        clients = [self.agent() for _ in range(CONNECTIONS)]
        per_thread = [[] for _ in range(CONNECTIONS)]
        for i in range(n):
            thread = (i % len(runs)) % CONNECTIONS
            per_thread[thread].append(lambda http=clients[thread], run_id=runs[i % len(runs)], i=i: park_one(http, run_id, i))
        hammer(per_thread)
        for resumes in by_run.values():
            for _, body in resumes:
                decisions.decide(body["approval_id"], {"approved": True}, user=self.reviewer)
        return [request for layer in itertools.zip_longest(*by_run.values()) for request in layer if request]


def bare_requests(base: str, n: int):
    http = http_client(base)
    return [lambda: checked(http.post("/insert/", json=BARE_BODY), 200) for _ in range(n)]


def one_cycle(condor: Condor, agent, reviewer, i: int) -> tuple[float, float, float, float]:
    """One HITL cycle in a run of its own: (whole, gate, decision, resume) in ms, the run's opening untimed."""
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
    return tuple(seconds * 1000 for seconds in (done - started, gated - started, decided - gated, done - decided))


def hitl_cycle(condor: Condor, cycles: int) -> dict:
    agent, reviewer = condor.agent(), condor.reviewer_http()
    timed = [one_cycle(condor, agent, reviewer, i) for i in range(cycles)]
    return {f"{name}_ms": statistics.median(column)
            for name, column in zip(("median", "gate", "decision", "resume"), zip(*timed))}


def bare_cycle(bare_base: str, cycles: int) -> dict:
    """Three bare one-INSERT requests in a row, from two clients as the HITL cycle sends its three: what the
    stack alone (gunicorn, DRF, psycopg, httpx) costs a cycle of three requests, before any of Condor's work."""
    totals = []
    with http_client(bare_base) as agent, http_client(bare_base) as reviewer:
        for cycle in range(cycles + 1):  # the first, untimed, opens both connections
            started = time.perf_counter()
            for http in (agent, reviewer, agent):
                checked(http.post("/insert/", json=BARE_BODY), 200)
            if cycle:
                totals.append(time.perf_counter() - started)
    return {"median_ms": statistics.median(totals) * 1000}


def langgraph_cycle(url: str, cycles: int) -> dict:
    """LangGraph's own HITL loop: a node interrupts, the caller resumes it, checkpointed in PostgreSQL."""
    from typing import TypedDict

    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    class State(TypedDict):
        tool: str
        args: dict
        decision: dict | None

    def gate(state: State) -> dict:
        return {"decision": interrupt({"tool": state["tool"], "args": state["args"]})}

    builder = StateGraph(State)
    builder.add_node("gate", gate)
    builder.add_edge(START, "gate")
    builder.add_edge("gate", END)
    totals, parts = [], {"interrupt": [], "resume": []}
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        graph = builder.compile(checkpointer=saver)
        for i in range(cycles):
            config = {"configurable": {"thread_id": f"bench-{time.time_ns()}-{i}"}}
            started = time.perf_counter()
            parked = graph.invoke({"tool": "prescribe_medication", "args": PRESCRIPTION, "decision": None}, config)
            assert "__interrupt__" in parked, parked
            interrupted = time.perf_counter()
            done_state = graph.invoke(Command(resume={"approved": True}), config)
            assert done_state["decision"] == {"approved": True}, done_state
            done = time.perf_counter()
            totals.append(done - started)
            parts["interrupt"].append(interrupted - started)
            parts["resume"].append(done - interrupted)
    return {"median_ms": statistics.median(totals) * 1000,
            **{f"{name}_ms": statistics.median(values) * 1000 for name, values in parts.items()}}


def throughput_with_wrk(figures: dict, condor: Condor, bare_base: str, gate_runs: list[str], round_: int,
                        seconds: float, floor: bool) -> None:
    """The round's bare, (floor,) gate and resume phases sent by wrk, each for `seconds`, each request at most once.

    Request files are sized past what the phase can send (wrk's rate would be wrong had one run
    out, so the bench stops then): the resumes at 1.5 times what this round's gate calls managed.
    """
    authorization = condor.headers["Authorization"]
    figures["bare"].append(wrk_client.run(bare_base, [("/insert/", BARE_BODY)] * int(4000 * seconds),
                                          connections=CONNECTIONS, seconds=seconds))
    if floor:
        from bench import floor as gate_floor

        for name, path in (("floor", "/floor/"), ("floor_folded", "/floor-folded/")):
            figures[name].append(wrk_client.run(
                bare_base, gate_floor.requests(len(gate_runs), int(4000 * seconds), f"{name}{round_}", path),
                connections=CONNECTIONS, seconds=seconds))
    figures["gate"].append(wrk_client.run(condor.base, condor.gate_calls(gate_runs, int(2000 * seconds), f"w{round_}"),
                                          connections=CONNECTIONS, seconds=seconds, authorization=authorization))
    wanted = int(figures["gate"][-1][0] * seconds * 1.5) + 200
    # Runs of their own: the ones left parked (the file is sized past the phase) take no more gate calls.
    parking_runs = [condor.executing_run(condor.http) for _ in range(len(gate_runs))]
    resumes = condor.approved_resumes(parking_runs, wanted, f"wr{round_}")
    figures["resume"].append(wrk_client.run(condor.base, resumes, connections=CONNECTIONS, seconds=seconds,
                                            authorization=authorization))


def _line(figures: dict) -> str:
    return ", ".join(f"{name} {value:.1f}" for name, value in figures.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-thread", type=int, default=40, help="requests each of the 16 threads sends")
    parser.add_argument("--cycles", type=int, default=30, help="HITL cycles a round, each side")
    parser.add_argument("--client", choices=["httpx", "wrk"], default="httpx",
                        help="what sends the throughput phases: 16 httpx threads here, or wrk (the issue's "
                             "client, 2 threads x 16 connections; bench/wrk_client.py)")
    parser.add_argument("--seconds", type=float, default=4, help="length of each wrk phase")
    parser.add_argument("--floor", action="store_true",
                        help="with --client wrk: also the gate allow's own statements sent with none of Condor's "
                             "Python, through the bare reference (bench/floor.py)")
    parser.add_argument("--inbox", action="store_true",
                        help="then the inbox page of 100 from 10,000 pending (bench/inbox_page.py, its own database)")
    parser.add_argument("--sweep", action="store_true",
                        help="then the sweep over 100,000 and 200,000 idle runs (bench/sweep.py, its own database; "
                             "many minutes)")
    options = parser.parse_args()
    if options.client == "wrk" and not wrk_client.available():
        raise SystemExit("--client wrk needs wrk: apt-get install wrk")
    if options.floor and options.client != "wrk":
        raise SystemExit("--floor needs --client wrk")
    # Where the floor's captured statements go; the bare server inherits the name and reads it lazily.
    floor_file = Path(tempfile.mkdtemp()) / "floor.pickle"
    os.environ["CONDOR_BENCH_FLOOR"] = str(floor_file)
    url = os.environ["DATABASE_URL"]
    ensure_database(url)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    condor_server, condor_base = serve("condor.wsgi", "condor.settings")
    bare_server, bare_base = serve("bench.bare.wsgi", "bench.bare.settings")
    try:
        import psycopg

        condor = Condor(condor_base)  # django.setup() first: the bare app's module imports DRF views
        with psycopg.connect(url, autocommit=True) as conn:
            from bench.bare.urls import TABLE_SQL

            conn.execute(TABLE_SQL)
        figures: dict[str, list] = {"bare": [], "floor": [], "floor_folded": [], "gate": [], "resume": [], "condor_cycle": [],
                                    "langgraph_cycle": [], "bare_cycle": []}
        # wrk cannot give each connection a run of its own: its calls go round-robin over four times as many.
        gate_runs = [condor.executing_run(condor.http) for _ in range(4 * CONNECTIONS)] if options.client == "wrk" else []
        if options.floor:
            from bench import floor as gate_floor
            from bench.hotpaths_cpu import Wsgi

            floor_runs = [condor.executing_run(condor.http) for _ in range(len(gate_runs))]
            gate_floor.capture(Wsgi(condor.headers), floor_runs, floor_file)
        for round_ in range(options.rounds):
            vacuum(url)  # untimed
            print(f"round {round_ + 1}: load average {os.getloadavg()}")
            if options.client == "wrk":
                throughput_with_wrk(figures, condor, bare_base, gate_runs, round_, options.seconds, options.floor)
            else:
                n = options.per_thread
                figures["bare"].append(hammer([bare_requests(bare_base, n) for _ in range(CONNECTIONS)]))
                figures["gate"].append(hammer([condor.gate_requests(n, f"g{round_}-{t}") for t in range(CONNECTIONS)]))
                # As many resumes as gate calls and bare inserts: a quarter as many (as before) made a
                # burst of 160 requests, a fraction of a second in which warm-up weighed as much as the rest.
                prepared = [condor.resume_requests(n, f"r{round_}-{t}") for t in range(CONNECTIONS)]
                figures["resume"].append(hammer(prepared))
            for name in ("bare", "floor", "floor_folded", "gate", "resume"):
                if not figures[name]:
                    continue
                rate, p50 = figures[name][-1]
                print(f"  {name:12} {rate:7.1f} req/s  p50 {p50:6.1f} ms")
            figures["condor_cycle"].append(hitl_cycle(condor, options.cycles))
            figures["langgraph_cycle"].append(langgraph_cycle(url, options.cycles))
            figures["bare_cycle"].append(bare_cycle(bare_base, options.cycles))
            print(f"  HITL cycle, Condor over HTTP (ms): {_line(figures['condor_cycle'][-1])}")
            print(f"  HITL cycle, LangGraph + PostgresSaver (ms): {_line(figures['langgraph_cycle'][-1])}")
            print(f"  three bare requests in a row over HTTP (ms): {_line(figures['bare_cycle'][-1])}")
        rate = {name: statistics.median(r for r, _ in figures[name]) for name in ("bare", "gate", "resume")}
        condor_ms = statistics.median(c["median_ms"] for c in figures["condor_cycle"])
        langgraph_ms = statistics.median(c["median_ms"] for c in figures["langgraph_cycle"])
        bare_cycle_ms = statistics.median(c["median_ms"] for c in figures["bare_cycle"])
        print(f"median of {options.rounds} rounds: bare {rate['bare']:.0f} req/s, "
              f"gate allow {rate['gate']:.0f} ({rate['gate'] / rate['bare']:.2f}x), "
              f"resume {rate['resume']:.0f} ({rate['resume'] / rate['bare']:.2f}x); "
              f"HITL cycle {condor_ms:.1f} ms vs LangGraph {langgraph_ms:.1f} ms ({condor_ms / langgraph_ms:.2f}x); "
              f"three bare requests over HTTP {bare_cycle_ms:.1f} ms ({bare_cycle_ms / langgraph_ms:.2f}x LangGraph)")
        if figures["floor"]:
            floor_rate = statistics.median(r for r, _ in figures["floor"])
            folded_rate = statistics.median(r for r, _ in figures["floor_folded"])
            print(f"the gate's SQL floor {floor_rate:.0f} req/s ({floor_rate / rate['bare']:.2f}x bare); "
                  f"gate allow at {rate['gate'] / floor_rate:.2f}x its floor; "
                  f"the floor folded into one statement {folded_rate:.0f} req/s ({folded_rate / rate['bare']:.2f}x bare)")
        print(f"load average {os.getloadavg()}")
    finally:
        for server in (condor_server, bare_server):
            server.terminate()
        for server in (condor_server, bare_server):
            try:  # a loaded machine can take gunicorn past 10 s to stop; never leave one behind
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    # The other two hot paths of issue 11 have scripts of their own (each fills a database
    # of its own, kept between runs); run here, they report under the same load.
    for wanted, script, database in ((options.inbox, "inbox_page.py", "condor_bench_inbox"),
                                     (options.sweep, "sweep.py", "condor_bench_sweep")):
        if wanted:
            print(f"\n== bench/{script} (load average {os.getloadavg()})", flush=True)
            subprocess.run([sys.executable, str(ROOT / "bench" / script)], cwd=ROOT, check=True,
                           env={**os.environ, "DATABASE_URL": url.rsplit("/", 1)[0] + "/" + database})


if __name__ == "__main__":
    main()
