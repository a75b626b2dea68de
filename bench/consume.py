"""Approve-then-resume throughput: the full API against a raw conditional UPDATE, same database.

Run by hand from the repository root (PostgreSQL only; the database is created and
migrated if needed):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench2 .venv/bin/python bench/consume.py

API cycle: a reviewer's `POST approvals/{id}/decision/` (Django session + CSRF) then the
agent's `POST runs/{id}/resume/` (API key), both through the whole Django/DRF stack
in-process (middleware, auth, strict parser, services, audit, outbox, commit, the
after-commit push to the channel layer) but without a socket. Each cycle uses its own
run, parked beforehand (parking is not timed).

Raw: the same two state changes as bare SQL in autocommit on one connection -- an
UPDATE pending→approved, then the single-use conditional UPDATE approved→consumed
(`status='approved' AND payload_hash=… AND expires_at>now()`), the statement resume
relies on. Also the consume UPDATE alone. The ratio says what the rest of a decision
and a resume (locks, checks, audit rows, events, HTTP handling) costs on top.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
from bench.scratch_db import ensure_database, setup_django  # noqa: E402

ARGS = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}


def actors(tag: str):
    """A fresh API client (with key) and a logged-in reviewer for this bench run."""
    from django.contrib.auth.models import Group, User
    from django.test import Client
    from rest_framework.test import APIClient

    from approvals.models import ApiClient, ApiClientKey

    client = ApiClient.objects.create(name=f"bench-agent-{tag}")
    _, key = ApiClientKey.objects.create_key(name="bench", client=client)
    api = APIClient(SERVER_NAME="localhost")  # a host ALLOWED_HOSTS accepts by default
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    reviewer = User.objects.create_user(username=f"bench-reviewer-{tag}")
    reviewer.groups.add(Group.objects.get(name="reviewers"))
    browser = Client(enforce_csrf_checks=True, SERVER_NAME="localhost")
    browser.force_login(reviewer)
    browser.get("/inbox/")
    return api, browser


def park(api, count: int) -> list[tuple[str, str]]:
    """`count` runs, each executing and parked on one prescription. Returns (run id, approval id)."""
    parked = []
    for _ in range(count):
        session = api.post("/api/v1/sessions/", {"age_band": "adult"}, format="json").json()["id"]
        run = api.post(f"/api/v1/sessions/{session}/runs/", {}, format="json").json()["id"]
        api.post(f"/api/v1/runs/{run}/transition/", {"to": "executing"}, format="json")
        gated = api.post(f"/api/v1/runs/{run}/tool-calls/", {
            "tool_call_id": "call-1", "step_id": "step-1", "tool": "prescribe_medication", "op": "create",
            "args": ARGS}, format="json")
        assert gated.status_code == 202, gated.content
        parked.append((run, gated.json()["approval"]["id"]))
    return parked


def cycle(api, browser, run_id: str, approval_id: str) -> None:
    decided = browser.post(f"/api/v1/approvals/{approval_id}/decision/", {"approved": True},
                           content_type="application/json",
                           HTTP_X_CSRFTOKEN=browser.cookies["csrftoken"].value)
    assert decided.status_code == 200, decided.content
    resumed = api.post(f"/api/v1/runs/{run_id}/resume/", {"approval_id": approval_id, "args": ARGS},
                       format="json")
    assert resumed.status_code == 200, resumed.content


def statements_per_cycle(api, browser, run_id: str, approval_id: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        cycle(api, browser, run_id, approval_id)
    return len(captured)  # read now: the next request resets the log it slices


def timed(loop) -> float:
    started = time.perf_counter()
    loop()
    return time.perf_counter() - started


def raw_rows(count: int, status: str) -> list[tuple[str, str]]:
    """`count` approval rows in `status` on one throwaway run. Returns (id, payload hash)."""
    from datetime import timedelta

    from django.utils import timezone

    from approvals.hashing import payload_hash
    from approvals.models import ApiClient, Approval
    from runs.models import Run
    from sessions_app.models import Session

    now = timezone.now()
    session = Session.objects.create(client=ApiClient.objects.latest("created_at"), title="raw bench")
    run = Run.objects.create(session=session, autonomy="guarded", last_activity_at=now)
    digest = payload_hash(ARGS)
    rows = [
        Approval(run=run, session=session, client=session.client, tool="prescribe_medication", op="create", tool_call_id=f"c{i}",
                 step_id=f"s{i}", contract_hash=uuid.uuid4().hex, reason_code="approval", rule_id="bench",
                 args=ARGS, approved_args=ARGS if status == "approved" else None, payload_hash=digest,
                 status=status, requested_at=now, expires_at=now + timedelta(hours=1))
        for i in range(count)
    ]
    Approval.objects.bulk_create(rows, batch_size=1000)
    return [(str(row.pk), digest) for row in rows]


TABLE = "approvals_approval"
APPROVE_SQL = (f"UPDATE {TABLE} SET status = 'approved', approved_args = args, decided_at = now(), "
               f"expires_at = now() + interval '900 seconds' WHERE id = %s AND status = 'pending'")
CONSUME_SQL = (f"UPDATE {TABLE} SET status = 'consumed', consumed_at = now() "
               f"WHERE id = %s AND status = 'approved' AND payload_hash = %s AND expires_at > now()")


def raw_pairs(rows) -> None:
    from django.db import connection

    with connection.cursor() as cursor:  # autocommit: each UPDATE is its own transaction
        for pk, digest in rows:
            cursor.execute(APPROVE_SQL, [pk])
            cursor.execute(CONSUME_SQL, [pk, digest])
            assert cursor.rowcount == 1


def raw_consumes(rows) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for pk, digest in rows:
            cursor.execute(CONSUME_SQL, [pk, digest])
            assert cursor.rowcount == 1


def chunks(items: list, count: int) -> list[list]:
    size = len(items) // count
    return [items[i * size:(i + 1) * size] for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=300, help="timed approve+resume cycles through the API")
    parser.add_argument("--raw", type=int, default=5000, help="rows for each raw UPDATE loop")
    parser.add_argument("--rounds", type=int, default=5,
                        help="interleaved rounds, so a load change on a shared machine hits both sides alike")
    options = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must point at PostgreSQL, e.g. postgres://postgres@127.0.0.1:5432/condor_bench2")
    ensure_database(url)
    setup_django()
    from django.conf import settings

    from approvals.models import Approval

    assert Approval._meta.db_table == TABLE
    api, browser = actors(uuid.uuid4().hex[:8])
    parked = park(api, options.cycles + 21)
    for run_id, approval_id in parked[:20]:  # warm-up: imports, caches, the connection pool
        cycle(api, browser, run_id, approval_id)
    statements = statements_per_cycle(api, browser, *parked[20])
    api_rounds = chunks(parked[21:], options.rounds)
    pair_rounds = chunks(raw_rows(options.raw, "pending"), options.rounds)
    consume_rounds = chunks(raw_rows(options.raw, "approved"), options.rounds)

    api_time = pair_time = consume_time = 0.0
    ratios, latencies = [], []
    for api_batch, pair_batch, consume_batch in zip(api_rounds, pair_rounds, consume_rounds, strict=True):
        def api_loop(batch=api_batch):
            for run_id, approval_id in batch:
                t0 = time.perf_counter()
                cycle(api, browser, run_id, approval_id)
                latencies.append(time.perf_counter() - t0)

        spent_api = timed(api_loop)
        spent_pair = timed(lambda batch=pair_batch: raw_pairs(batch))
        consume_time += timed(lambda batch=consume_batch: raw_consumes(batch))
        api_time, pair_time = api_time + spent_api, pair_time + spent_pair
        ratios.append((len(pair_batch) / spent_pair) / (len(api_batch) / spent_api))

    api_rate = sum(map(len, api_rounds)) / api_time
    pair_rate = sum(map(len, pair_rounds)) / pair_time
    consume_rate = sum(map(len, consume_rounds)) / consume_time
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(f"Python {platform.python_version()} on {platform.machine()} ({os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}), database {urlparse(url).path[1:]}, channel layer {layer}")
    print(f"API approve+resume:          {api_rate:8.1f} cycles/s  (p50 {statistics.median(latencies) * 1e3:.1f} ms, "
          f"p95 {statistics.quantiles(latencies, n=20)[-1] * 1e3:.1f} ms, {statements} SQL statements per cycle)")
    print(f"raw approve+consume UPDATEs: {pair_rate:8.1f} pairs/s")
    print(f"raw consume UPDATE alone:    {consume_rate:8.1f} per s")
    print(f"ratio raw pair / API cycle:  {pair_rate / api_rate:8.1f}x overall, "
          f"{statistics.median(ratios):.1f}x median of {options.rounds} interleaved rounds "
          f"({min(ratios):.1f}-{max(ratios):.1f})")


if __name__ == "__main__":
    main()
