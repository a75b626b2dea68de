"""The audit log at a million rows: the admin pages, the CSV export, verify_audit, and the chain's cost.

Run by hand from the repository root, against a scratch PostgreSQL database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_admin .venv/bin/python bench/admin.py

The database is created and migrated if needed, then filled up to `--rows` audit rows
(valid chains, ~20 rows per session chain, written with COPY; kept for the next run:
the log is append-only). Then, as a compliance user through Django's test Client:
the changelist's first page, a `kind` filter, a patient_ref search and page 500 (best
and median of `--repeat`); the CSV export of a filtered set (rows/s); `verify_audit`
over the whole log (rows/s); and one gate call (an allowed low-tier write, through
the service) with the chain head and without it (see gate_cost).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
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

KINDS = ["verdict"] * 5 + ["suspend", "decision", "consume", "result", "run_close", "expiry"]
DECISIONS = {"verdict": ["allow", "require_approval", "blocked"], "suspend": ["suspended"],
             "decision": ["approved", "rejected"], "consume": ["consumed"], "result": ["ok", "error"],
             "run_close": ["completed", "aborted"], "expiry": ["expired"]}
RULES = ["read.allow", "mutate.high-tier-always-approval", "mutate.low-tier-autonomous-allow", "comms.approval",
         "egress.host-not-allowed", "mutate.destructive-op-approval"]
TOOLS = ["search_patients", "prescribe_medication", "record_vitals", "send_email", "order_lab_test"]


def fill(target: int, per_chain: int = 20) -> int:
    """COPY rows in valid session chains until the log holds `target` rows. Returns rows added."""
    from django.db import connection
    from django.utils import timezone

    from approvals.audit_chain import row_hash
    from approvals.models import AuditEvent
    from approvals.models.audit import GENESIS_HASH

    have = AuditEvent.objects.count()
    missing = target - have
    if missing <= 0:
        return 0
    rng = random.Random(have)
    start = timezone.now() - timedelta(days=60)
    step = timedelta(days=60) / missing
    columns = ("at", "kind", "actor", "session_id", "run_id", "approval_id", "patient_ref", "tool", "op",
               "decision", "rule_id", "data", "chain", "seq", "prev_hash", "hash")
    # Sessions interleave, as live traffic does: a handful open at any time.
    open_chains: list[dict] = []
    heads = []
    began = time.perf_counter()
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY approvals_auditevent ({', '.join(columns)}) FROM STDIN") as copy:
            for n in range(missing):
                if len(open_chains) < 50 or rng.random() < 0.05:
                    session = uuid.uuid4()
                    open_chains.append({"session": session, "chain": f"session:{session}", "seq": 0,
                                        "hash": GENESIS_HASH, "run": uuid.uuid4(), "left": per_chain,
                                        "patient": f"MRN-{rng.randrange(10_000, 60_000)}"})
                link = open_chains[rng.randrange(len(open_chains))]
                kind = rng.choice(KINDS)
                values = {
                    "chain": link["chain"], "seq": link["seq"] + 1, "prev_hash": link["hash"],
                    "at": start + step * n, "kind": kind, "actor": "client:ward-agent" if kind != "decision"
                    else f"user:reviewer{rng.randrange(20)}", "actor_user_id": None, "actor_client_id": None,
                    "session_id": link["session"], "run_id": link["run"],
                    "approval_id": uuid.uuid4() if kind in ("suspend", "decision", "consume", "expiry") else None,
                    "patient_ref": link["patient"], "tool": rng.choice(TOOLS), "op": "create",
                    "decision": rng.choice(DECISIONS[kind]), "rule_id": rng.choice(RULES),
                    "data": {"tool_call_id": f"call-{n}", "step_id": f"s{n % 7}", "payload_hash": "ab" * 32},
                }
                digest = row_hash(tuple(values[field] for field in (
                    "chain", "seq", "prev_hash", "at", "kind", "actor", "actor_user_id", "actor_client_id",
                    "session_id", "run_id", "approval_id", "patient_ref", "tool", "op", "decision", "rule_id",
                    "data")))
                copy.write_row([values[c] if c != "data" else json.dumps(values["data"]) for c in columns[:-1]]
                               + [digest])
                link["seq"], link["hash"], link["left"] = values["seq"], digest, link["left"] - 1
                if link["left"] == 0:
                    open_chains.remove(link)
                    heads.append((link["chain"], link["seq"], link["hash"]))
                if n and n % 200_000 == 0:
                    print(f"  {n:,} rows written ({time.perf_counter() - began:.0f} s)", flush=True)
        heads += [(link["chain"], link["seq"], link["hash"]) for link in open_chains]
        with cursor.cursor.copy("COPY approvals_auditchainhead (chain, seq, hash) FROM STDIN") as copy:
            for head in heads:
                copy.write_row(head)
        # The steady state autovacuum keeps (visibility map set: counts read the index only).
        cursor.execute("VACUUM ANALYZE approvals_auditevent")
    return missing


def timed(call, repeat: int) -> tuple[float, float, float]:
    """Best and median wall ms, and the best ms of this process's CPU (Python's side, load-proof)."""
    samples, cpu = [], []
    for _ in range(repeat):
        began, began_cpu = time.perf_counter(), time.process_time()
        call()
        samples.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
    return min(samples), statistics.median(samples), min(cpu)


def compliance_browser():
    from django.contrib.auth.models import Group, User
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench-compliance", defaults={"is_staff": True})
    user.groups.add(Group.objects.get(name="compliance"))
    http = Client(HTTP_HOST="127.0.0.1")
    http.force_login(user)
    return http


def gate_cost(calls: int, rounds: int) -> tuple[float, float]:
    """µs per allowed gate call (service level): with the chain head, and without it.

    "Without" still hashes and links each row (so the log stays verifiable), but from a
    tip kept in this process instead of the locked head row: the difference is the head's
    locked read and update. The hash itself (~15-30 µs of CPU) is in both.
    """
    from approvals import audit_chain
    from approvals.gate import GateCall, gate_tool_call
    from approvals.models import ApiClient
    from django.db.models import F

    from approvals.models.audit import AuditChainHead
    from condor.sql import run_together
    from runs import spine
    from sessions_app.models import Session

    client, _ = ApiClient.objects.get_or_create(name="bench-gate")
    session = Session.objects.create(client=client, patient_ref="MRN-BENCH", autonomy="autonomous",
                                     age_band="adult", consent=True)
    run = spine.open_run(session)
    spine.transition(run.pk, "executing")
    counter = itertools.count()
    chained = audit_chain.append
    tip = {}
    written = []

    def headless(event, *, along=()):  # linked from the in-process tip: no head lock, no head update
        event.seq, event.prev_hash = tip[event.chain]
        event.seq += 1
        event.hash = audit_chain.event_hash(event)
        event.save(force_insert=True)
        run_together(list(along))  # the caller's own writes (the gate's outbox event)
        tip[event.chain] = (event.seq, event.hash)
        written.append((event.chain, event.seq, event.hash))
        return event

    def catch_up_heads():  # outside the timing: walk the heads over the rows written headless
        for chain, seq, digest in written:
            AuditChainHead.objects.filter(chain=chain).update(seq=seq, prev_hash=F("hash"), hash=digest)
        written.clear()

    def burst() -> float:
        began = time.perf_counter()
        for _ in range(calls):
            n = next(counter)
            gate_tool_call(run, GateCall(tool_call_id=f"b{n}", step_id=f"s{n}", tool="record_vitals", op="create",
                                         args={"heart_rate": 60 + n % 40}, metadata={}), client=client)
        return (time.perf_counter() - began) / calls * 1e6

    with_chain, without = [], []
    for _ in range(rounds):  # interleaved, so a busy machine slows both alike
        audit_chain.append = chained
        with_chain.append(burst())
        tip.update({head.chain: (head.seq, head.hash) for head in AuditChainHead.objects.filter(
            chain=audit_chain.chain_for(session.pk))})
        audit_chain.append = headless
        without.append(burst())
        catch_up_heads()
    audit_chain.append = chained
    spine.close(run.pk, "completed", actor_client=client)
    return min(with_chain), min(without)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--gate-calls", type=int, default=200)
    parser.add_argument("--gate-rounds", type=int, default=5)
    args = parser.parse_args()
    ensure_database(os.environ.get("DATABASE_URL", ""))
    setup_django()

    from approvals import audit_chain
    from approvals.models import AuditEvent

    print(f"load average before: {os.getloadavg()}")
    added = fill(args.rows)
    total = AuditEvent.objects.count()
    print(f"audit rows: {total:,} ({added:,} added)")
    patient = AuditEvent.objects.order_by("id").values_list("patient_ref", flat=True)[total // 2]

    http = compliance_browser()
    page = "/admin/approvals/auditevent/"
    pages = {
        "changelist, first page": {},
        "kind filter (suspend)": {"kind": "suspend"},
        f"search ({patient})": {"q": patient},
        "page 500": {"p": "500"},
    }
    for name, query in pages.items():
        def get(query=query):
            response = http.get(page, query)
            assert response.status_code == 200, (name, response.status_code)
        get()  # warm
        best, median, cpu = timed(get, args.repeat)
        print(f"{name:32s} best {best:7.1f} ms  median {median:7.1f} ms  python cpu {cpu:6.1f} ms  "
              f"(target ≤ 300 ms)")

    token_page = http.get(page)
    csrf = token_page.cookies.get("csrftoken")
    began = time.perf_counter()
    response = http.post(f"{page}export/?kind=verdict", {"csrfmiddlewaretoken": csrf.value if csrf else ""})
    lines = sum(chunk.count(b"\n") for chunk in response.streaming_content) - 1
    seconds = time.perf_counter() - began
    print(f"CSV export (kind=verdict): {lines:,} rows in {seconds:.1f} s = {lines / seconds:,.0f} rows/s")

    began = time.perf_counter()
    report = audit_chain.verify()
    seconds = time.perf_counter() - began
    print(f"verify_audit: {report.rows:,} rows in {report.chains:,} chains, {seconds:.1f} s = "
          f"{report.rows / seconds:,.0f} rows/s, intact={report.intact} {report.broken or ''}")

    with_chain, without = gate_cost(args.gate_calls, args.gate_rounds)
    print(f"gate call (allow, service level): {with_chain:.0f} µs with the chain head, {without:.0f} µs "
          f"without it: ratio {with_chain / without:.2f} (+{with_chain - without:.0f} µs)")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
