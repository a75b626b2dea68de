"""The console's search through a call's arguments, at a million audit rows.

Run by hand from the repository root, against a scratch PostgreSQL database of its own:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_search .venv/bin/python bench/admin_search.py

The database is created and migrated if needed, then filled once (kept for the next run)
with 20,000 sessions and runs, 200,000 approvals whose arguments read like prescriptions
(seven keys: patient ref, drug among 12, dose, route, frequency, days, a note) and
1,000,000 audit rows: four for each approval, then 200,000 allowed verdicts. The rows are
written with set-based SQL and the append-only triggers off (a scratch database: the
chains are not valid and need not be). Then, as a compliance user through Django's test
Client, best and median of `--repeat`: the audit log's first page and its search by a
patient ref, by a drug and a patient, and by a drug in more than 1,000 approvals; the
approvals page and its search by a patient ref and by a drug and a patient.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")
from bench.scratch_db import ensure_database, setup_django, vacuum  # noqa: E402

DRUGS = (
    "amoxicillin",
    "gentamicin",
    "warfarin",
    "metformin",
    "paracetamol",
    "ibuprofen",
    "ceftriaxone",
    "heparin",
    "insulin glargine",
    "vancomycin",
    "lisinopril",
    "atorvastatin",
)
TOOLS = ("prescribe_medication", "change_medication", "order_lab_test", "send_email", "record_vitals")
CLIENT = "00000000-0000-0000-0000-0000000000aa"


def fill(cursor, approvals: int = 200_000, sessions: int = 20_000) -> None:
    """Sessions, runs, approvals and their audit rows, by INSERT ... SELECT generate_series."""
    tables = ("approvals_auditevent", "approvals_approval", "runs_run", "sessions_app_session")
    for table in tables:
        cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER ALL")
    cursor.execute(
        "INSERT INTO approvals_apiclient (id, name, can_park, created_at) "
        "VALUES (%s, 'bench-search-agent', true, now())",
        [CLIENT],
    )
    cursor.execute(
        "INSERT INTO sessions_app_session (id, title, patient_ref, autonomy, consent, age_band, tainted, created_at, "
        "updated_at, client_id, care_unit) SELECT md5('s'||n)::uuid, 'Bed '||n, 'MRN-'||(10000+n), 'guarded', true, "
        "'adult', false, now(), now(), %s, 'Ward '||(n%%9) FROM generate_series(1, %s) n",
        [CLIENT, sessions],
    )
    cursor.execute(
        "INSERT INTO runs_run (id, state, terminal_reason, autonomy, flow_key, engine, summary, usage, created_at, "
        "last_activity_at, session_id) SELECT md5('r'||n)::uuid, 'completed', 'completed', 'guarded', '', '', '', "
        "'{}', now(), now(), md5('s'||n)::uuid FROM generate_series(1, %s) n",
        [sessions],
    )
    cursor.execute(
        "INSERT INTO approvals_approval (id, tool, op, tool_call_id, step_id, contract_hash, reason_code, rule_id, "
        "explanation, message, args, payload_hash, resume_schema, status, decision_reason, requested_at, expires_at, "
        "run_id, session_id, approvals, approvals_required, client_id, decided_at, bound_context, locked_args) "
        "SELECT md5('a'||n)::uuid, (%(tools)s::text[])[1+n%%5], 'create', 'call-'||n, 'step-'||n, repeat('c', 64), 'policy', "
        "'mutate.high-tier-always-approval', '', '', jsonb_build_object('patient_ref', 'MRN-'||(10000+n%%%(s)s+1), "
        "'drug', (%(drugs)s::text[])[1+n%%12], 'dose', (ARRAY['250 mg','500 mg','1 g','5 mg/kg','10 units'])[1+(n/12)%%5], "
        "'route', (ARRAY['oral','iv','sc'])[1+n%%3], 'frequency', (ARRAY['every 8 hours','q12h','daily','once'])"
        "[1+n%%4], 'days', 1+n%%14, 'note', 'reason given by the agent number '||n), repeat('p', 64), '{}', "
        "(ARRAY['approved','rejected','consumed','expired'])[1+n%%4], '', now() - n * interval '1 second', now(), "
        "md5('r'||(n%%%(s)s+1))::uuid, md5('s'||(n%%%(s)s+1))::uuid, '[]', 1, %(client)s, "
        "now() - n * interval '1 second', '{}', '[]' FROM generate_series(1, %(n)s) n",
        {"tools": list(TOOLS), "drugs": list(DRUGS), "s": sessions, "client": CLIENT, "n": approvals},
    )
    columns = (
        "at, kind, actor, session_id, run_id, approval_id, patient_ref, tool, op, decision, rule_id, data, "
        "chain, seq, prev_hash, hash"
    )
    cursor.execute(
        f"INSERT INTO approvals_auditevent ({columns}) SELECT now() - (%(rows)s - k) * interval '1 second', "
        "(ARRAY['suspend','decision','consume','args_viewed'])[1+k%%4], 'client:bench-search-agent', "
        "md5('s'||((k/4)%%%(s)s+1))::uuid, md5('r'||((k/4)%%%(s)s+1))::uuid, md5('a'||(k/4+1))::uuid, "
        "'MRN-'||(10000+(k/4)%%%(s)s+1), (%(tools)s::text[])[1+(k/4+1)%%5], 'create', 'suspended', "
        "'mutate.high-tier-always-approval', '{}', 'bench:'||k, 1, '', '' FROM generate_series(0, %(rows)s - 1) k",
        {"rows": approvals * 4, "s": sessions, "tools": list(TOOLS)},
    )
    cursor.execute(
        f"INSERT INTO approvals_auditevent ({columns}) SELECT now(), 'verdict', 'client:bench-search-agent', "
        "md5('s'||(k%%%(s)s+1))::uuid, md5('r'||(k%%%(s)s+1))::uuid, NULL, 'MRN-'||(10000+k%%%(s)s+1), "
        "'search_patients', '', 'allow', 'read.allow', '{}', 'benchv:'||k, 1, '', '' "
        "FROM generate_series(0, %(n)s - 1) k",
        {"n": approvals, "s": sessions},
    )
    for table in tables:
        cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER ALL")


def timed(http, url: str, q: str, repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        response = http.get(url, {"q": q} if q else {})
        samples.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, (url, q, response.status_code)
    return min(samples), statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2,000 approvals and 10,000 audit rows, each search once: checks the script runs",
    )
    args = parser.parse_args()
    approvals, sessions = (2_000, 200) if args.smoke else (200_000, 20_000)
    repeat = 1 if args.smoke else args.repeat
    url = os.environ.get("DATABASE_URL", "")
    ensure_database(url)
    setup_django()

    from django.contrib.auth.models import Group, User
    from django.db import connection, transaction
    from django.test import Client

    from approvals.models import Approval

    if not Approval.objects.exists():
        print(f"filling: {approvals:,} approvals, {approvals * 5:,} audit rows", flush=True)
        with transaction.atomic(), connection.cursor() as cursor:
            fill(cursor, approvals=approvals, sessions=sessions)
        vacuum(url)
    user, _ = User.objects.get_or_create(username="bench-compliance", defaults={"is_staff": True})
    user.groups.add(Group.objects.get(name="compliance"))
    http = Client(HTTP_HOST="127.0.0.1")
    http.force_login(user)
    print(f"load average before: {os.getloadavg()}")
    log, approvals = "/admin/audit/auditevent/", "/admin/approvals/approval/"
    for label, page, q in (
        ("audit log, first page", log, ""),
        ("audit log, `MRN-10417`", log, "MRN-10417"),
        ("audit log, `amoxicillin MRN-10417`", log, "amoxicillin MRN-10417"),
        ("audit log, `amoxicillin` (in 16,667 approvals)", log, "amoxicillin"),
        ("approvals, first page", approvals, ""),
        ("approvals, `MRN-10417`", approvals, "MRN-10417"),
        ("approvals, `amoxicillin MRN-10417`", approvals, "amoxicillin MRN-10417"),
    ):
        best, median = timed(http, page, q, repeat)
        print(f"| {label} | {best:.0f} ms | {median:.0f} ms |", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
