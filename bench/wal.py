"""WAL bytes per row inserted into the hot tables, with and without a redundant foreign-key index.

Issue 11: RunEvent.run, Approval.run, ToolCall.run and Message.session each had an index
of their own although a composite index or unique constraint leads with the same column.
This script puts each such index back for a round and takes it away for the next,
interleaved, and measures what inserting rows costs in WAL both ways:

- `explain`: the WAL bytes PostgreSQL counts for the INSERT statements themselves
  (`EXPLAIN (ANALYZE, WAL)` of each single-row INSERT the ORM would send, summed): this
  backend's own WAL only, so other work on the machine does not change it.
- `lsn`: pg_current_wal_lsn() before and after the batch (the transaction's commit
  included): cluster-wide, so other databases' writes only ever add to it; the smallest
  round is the one to read.

It then prints the plans of the lookups the dropped indexes used to serve (read by run or
by session), on a populated table, to show a composite index serves each of them.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_wal .venv/bin/python bench/wal.py
    # options: --rows 400 --rounds 5 --population 3000

Bench rows stay behind (the audit log is append-only): point it at a scratch database.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
from bench.scratch_db import ensure_database, setup_django  # noqa: E402

# (label, app label, model, the index the migrations dropped, its column, the composite that covers it)
REDUNDANT = [
    ("runevent", "runs", "RunEvent", "runs_runevent_run_id_8bd13aa7", "run_id", "runevent_run_seq"),
    ("approval", "approvals", "Approval", "approvals_approval_run_id_6bf3dbce", "run_id", "one_approval_per_suspend"),
    ("toolcall", "approvals", "ToolCall", "approvals_toolcall_run_id_53f311e4", "run_id", "one_tool_call_per_id"),
    ("message", "sessions_app", "Message", "sessions_app_message_session_id_a5aec9af", "session_id",
     "message_session_seq"),
]
ARGS = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}


def _sessions(tag: str, count: int) -> list:
    from approvals.models import ApiClient
    from sessions_app.models import Session

    client = ApiClient.objects.create(name=f"bench-wal-{tag}")
    return Session.objects.bulk_create([Session(client=client, patient_ref=f"P-{tag}-{n}") for n in range(count)])


def _runs(sessions: list, count: int):
    from django.utils import timezone

    from runs.models import Run
    from runs.states import RunState, TerminalReason

    now = timezone.now()
    return Run.objects.bulk_create([
        Run(session=sessions[n % len(sessions)], state=RunState.COMPLETED, terminal_reason=TerminalReason.COMPLETED,
            last_activity_at=now, closed_at=now) for n in range(count)])


def _rows(label: str, runs, per_run: int, start: int = 0) -> list:
    """`per_run` rows of `label` for each run, as the hot paths write them."""
    from django.utils import timezone

    from approvals.hashing import payload_hash
    from approvals.models import Approval, ToolCall
    from runs import frames
    from runs.models import RunEvent
    from sessions_app.models import Message

    now = timezone.now()
    rows = []
    for run in runs:
        for n in range(start, start + per_run):
            call_id = f"call-{n}"
            if label == "runevent":
                rows.append(RunEvent(run=run, kind="tool.allow", step_id=f"step-{n}",
                                     data={"tool_call_id": call_id, "rule_id": "read.allow"},
                                     frames=frames.allowed_call_frames(call_id, "chart.read", ARGS)))
            elif label == "approval":
                rows.append(Approval(run=run, session_id=run.session_id, client_id=run.session.client_id, tool="prescribe", op="create", tool_call_id=call_id,
                                     step_id=f"step-{n}", contract_hash=uuid.uuid4().hex * 2, reason_code="approval",
                                     rule_id="prescribe.high", hitl_tier="high", args=ARGS,
                                     payload_hash=payload_hash(ARGS), resume_schema={"type": "object"},
                                     requested_at=now, expires_at=now + timedelta(hours=1)))
            elif label == "toolcall":
                rows.append(ToolCall(run=run, tool_call_id=call_id, step_id=f"step-{n}", tool="chart.read",
                                     op="read", args=ARGS, decision="allow", rule_id="read.allow"))
            else:
                rows.append(Message(session_id=run.session_id, run=run, message_id=f"{run.pk}-{n}", role="assistant",
                                    parts=[{"type": "text", "text": "The discharge letter is ready for review."}]))
    return rows


def populate(tag: str, runs: int) -> list:
    """Sessions of 5 closed runs each, `runs` in all, each with a few rows of every hot table; then ANALYZE."""
    from django.db import connection

    sessions = _sessions(tag, max(1, runs // 5))
    made = _runs(sessions, runs)
    for label, _, _, _, _, _ in REDUNDANT:
        rows = _rows(label, made, per_run=4)
        type(rows[0]).objects.bulk_create(rows, batch_size=2000)
    with connection.cursor() as cursor:
        for _, app, model, _, _, _ in REDUNDANT:
            cursor.execute(f"ANALYZE {app}_{model.lower()}")
    return sessions


def measure(label: str, sessions: list, rows: int) -> dict:
    """WAL of `rows` single-row INSERTs in one transaction, a row: bytes without full-page images,
    of them the B-tree's, records, and full-page-image bytes (pg_walinspect over the batch's LSN
    range, this transaction's records only)."""
    from django.db import connection, transaction

    from condor.sql import insert_sql

    per_run = 10
    with transaction.atomic():
        runs = _runs(sessions, max(1, rows // per_run))
    batch = _rows(label, runs, per_run=per_run)[:rows]
    statements = [insert_sql(row, returning=False) for row in batch]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()")
        (before,) = cursor.fetchone()
        with transaction.atomic():
            cursor.execute("SELECT mod(txid_current(), 4294967296)::text")
            (xid,) = cursor.fetchone()
            for sql, params in statements:
                cursor.execute(sql, params)
        cursor.execute("SELECT pg_current_wal_lsn()")
        (after,) = cursor.fetchone()
        cursor.execute("""
            SELECT count(*), sum(record_length - fpi_length),
                   sum(record_length - fpi_length) FILTER (WHERE resource_manager = 'Btree'), sum(fpi_length)
            FROM pg_get_wal_records_info(%s, %s) WHERE xid::text = %s
        """, [before, after, xid])
        records, plain, btree, fpi = cursor.fetchone()
    n = len(batch)
    return {"bytes": plain / n, "btree": (btree or 0) / n, "records": records / n, "fpi": (fpi or 0) / n}


def set_index(present: bool, index: str, table: str, column: str) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        if present:
            cursor.execute(f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ("{column}")')
        else:
            cursor.execute(f'DROP INDEX IF EXISTS "{index}"')


LOOKUPS = [
    ("runevent: the stream replay", "runevent",
     "SELECT id FROM runs_runevent WHERE run_id = %s AND id > 0 ORDER BY id"),
    ("runevent: the run cascade / FK check", "runevent",
     "SELECT 1 FROM runs_runevent WHERE run_id = %s"),
    ("approval: a run's open approvals", "approval",
     "SELECT count(*) FROM approvals_approval WHERE run_id = %s AND status IN ('pending', 'approved') "
     "AND expires_at > now()"),
    ("approval: a close's expiry (run_id = ANY)", "approval",
     "SELECT id FROM approvals_approval WHERE run_id = ANY(%s) AND status IN ('pending') FOR UPDATE"),
    ("toolcall: a run's ledger", "toolcall",
     "SELECT id FROM approvals_toolcall WHERE run_id = %s ORDER BY created_at"),
    ("toolcall: runs' ledgers (history)", "toolcall",
     "SELECT id FROM approvals_toolcall WHERE run_id = ANY(%s)"),
    ("message: history", "message",
     "SELECT seq FROM sessions_app_message WHERE session_id = %s ORDER BY seq"),
    ("message: the session cascade / FK check", "message",
     "SELECT 1 FROM sessions_app_message WHERE session_id = %s"),
]


def plans(sessions: list) -> None:
    """Each lookup's plan: the index it reads, or its scan when it reads none."""
    import re

    from django.db import connection

    from runs.models import Run

    session = sessions[len(sessions) // 2]
    run_ids = list(Run.objects.filter(session=session).values_list("pk", flat=True)[:3])
    with connection.cursor() as cursor:
        for what, _, sql in LOOKUPS:
            arg = ([run_ids] if "ANY" in sql else [run_ids[0]]) if "run_id" in sql else [session.pk]
            cursor.execute(f"EXPLAIN {sql}", arg)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            used = re.findall(r"((?:Bitmap )?Index(?: Only)? Scan)(?: using| on) (\w+)", plan)
            shown = ", ".join(f"{kind} on {index}" for kind, index in used) or plan.splitlines()[0].strip()
            print(f"  {what:45s} {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=400, help="single-row INSERTs a round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds each way, interleaved")
    parser.add_argument("--population", type=int, default=3000, help="closed runs (4 rows of each table apiece)")
    options = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    ensure_database(url)
    setup_django()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    tag = uuid.uuid4().hex[:8]
    print(f"load average {os.getloadavg()}; populating {options.population} runs…", flush=True)
    sessions = populate(tag, options.population)
    print("plans of the lookups the dropped indexes served (schema as migrated):")
    plans(sessions)
    print(f"\nWAL a row, {options.rows} single-row INSERTs a round, {options.rounds} rounds each way (interleaved),"
          " medians; bytes without full-page images (FPI), which depend on when a checkpoint fell:")
    print(f"{'table':10s} {'fk index':9s} {'B/row':>7s} {'B-tree B/row':>13s} {'records/row':>12s} {'FPI B/row':>10s}")
    try:
        for label, app, model, index, column, covering in REDUNDANT:
            table = f"{app}_{model.lower()}"
            results = {True: [], False: []}
            for _ in range(options.rounds):
                for present in (True, False):
                    set_index(present, index, table, column)
                    # A batch first, not counted: a freshly built index is packed, so its first
                    # inserts split more pages than a long-lived one's would.
                    measure(label, sessions, options.rows)
                    results[present].append(measure(label, sessions, options.rows))
            median = {present: {key: statistics.median(r[key] for r in results[present])
                                for key in ("bytes", "btree", "records", "fpi")} for present in (True, False)}
            for present in (True, False):
                m = median[present]
                print(f"{label:10s} {'kept' if present else 'dropped':9s} {m['bytes']:7.0f} {m['btree']:13.0f} "
                      f"{m['records']:12.2f} {m['fpi']:10.0f}")
            print(f"{'':10s} dropped/kept {median[False]['bytes'] / median[True]['bytes']:.2f}"
                  f"  (covered by {covering}, which leads with {column})", flush=True)
    finally:
        for _, app, model, index, column, _ in REDUNDANT:
            set_index(False, index, f"{app}_{model.lower()}", column)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
