"""The inbox websocket's snapshot page: a page of 100 from 10,000 pending cards.

Run by hand from the repository root, against a scratch PostgreSQL database (created
and migrated if needed; the cards are kept for the next run):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench_inbox .venv/bin/python bench/inbox_page.py

Fills the database up to `--pending` pending approvals (1,000 sessions of ten, each
card with its gated call in the ToolCall ledger and a rationale, mixed tiers and
deadlines, one in nine escalated), then builds the message the inbox socket sends, as
the consumer does (the reviewer's scope read, the page, its text): page 1, and a page
deep in the queue (after the card at `--deep`). For each: p50 and p99 of `--repeat`
builds (wall clock), the median CPU time of this process (the database's own time is
not in it), the queries one build makes, and the message's size. With `--reference REV`
the page modules of git revision REV build the same messages in the same process, the
two versions taking turns, and the new / old ratios are printed (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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

ARGS = {"drug": "gentamicin", "dose_mg_per_kg": 5, "route": "IV", "frequency": "once daily", "weight_kg": 72.4}
TIERS = ["high", "low", None]


def fill(target: int) -> int:
    """Pending cards (and their calls) until `target` wait. Returns how many were added."""
    from django.utils import timezone

    from agents.models import ApiClient
    from approvals.models import Approval, ApprovalStatus, ToolCall
    from runs.models import Run
    from sessions_app.models import Session

    missing = target - Approval.objects.filter(status=ApprovalStatus.PENDING).count()
    if missing <= 0:
        return 0
    client, _ = ApiClient.objects.get_or_create(name="inbox-bench")
    now = timezone.now()
    sessions = Session.objects.bulk_create(
        Session(client=client, title=f"bench ward {n}", patient_ref=f"MRN-{n:06d}", care_unit=f"WARD-{n % 12}")
        for n in range(-(-missing // 10))
    )
    runs = Run.objects.bulk_create(
        Run(session=s, autonomy="guarded", state="suspended", last_activity_at=now, suspended_at=now) for s in sessions
    )
    calls, approvals = [], []
    for n in range(missing):
        run = runs[n // 10]
        call_id = f"call-{uuid.uuid4().hex[:12]}"
        calls.append(
            ToolCall(
                run=run,
                tool_call_id=call_id,
                step_id=call_id,
                tool="prescribe_medication",
                op="create",
                args=ARGS,
                metadata={"rationale": "Creatinine rose; dose by weight."},
                decision="require_approval",
                rule_id="mutate.high-tier-always-approval",
            )
        )
        approvals.append(
            Approval(
                run=run,
                session=run.session,
                client=client,
                tool="prescribe_medication",
                op="create",
                tool_call_id=call_id,
                step_id=call_id,
                contract_hash=uuid.uuid4().hex,
                reason_code="approval",
                rule_id="bench",
                hitl_tier=TIERS[n % 3],
                args=ARGS,
                payload_hash="0" * 64,
                requested_at=now,
                # Deadlines a day or more away: the figures hold for as long as the cards are kept.
                expires_at=now + timedelta(days=30, seconds=(n * 7919) % 86400),
                escalated_at=now if n % 9 == 0 else None,
            )
        )
    ToolCall.objects.bulk_create(calls, batch_size=2000)
    Approval.objects.bulk_create(approvals, batch_size=2000)
    # Statistics and visibility as autovacuum would leave them once it has seen the new rows: measured right
    # after a bulk fill without them, the planner guesses a handful of pending rows and sorts
    # all 10,000 instead of walking the queue index (13 ms for the page query instead of 1.7).
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return missing


def reviewer():
    from django.contrib.auth.models import Group, User

    user, created = User.objects.get_or_create(username="bench-reviewer")
    if created:
        user.groups.add(Group.objects.get(name="reviewers"))
    return user


# The modules a page is built with, loaded again from `--reference REV` under bench_ref.* (their
# imports of each other rewritten) so that the two versions take turns in one process.
_REFERENCE_MODULES = ("hashing", "card_context", "cards", "inbox_pages")


def reference_pages(rev: str):
    """inbox_pages as it was at `rev`, built on that rev's cards, context and hashing."""
    import subprocess
    import types

    package = types.ModuleType("bench_ref")
    package.__path__ = []
    sys.modules["bench_ref"] = package
    for name in _REFERENCE_MODULES:
        source = subprocess.run(
            ["git", "show", f"{rev}:approvals/{name}.py"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
        for other in _REFERENCE_MODULES:
            source = source.replace(f"from approvals.{other} import", f"from bench_ref.{other} import")
            source = source.replace(f"from approvals import {other}\n", f"from bench_ref import {other}\n")
        module = types.ModuleType(f"bench_ref.{name}")
        sys.modules[module.__name__] = module
        exec(compile(source, f"{rev}:approvals/{name}.py", "exec"), module.__dict__)
        setattr(package, name, module)
    return package.inbox_pages


def message(pages, scope, cursor) -> str:
    """The text the inbox socket sends for the page after `cursor`, as `pages` (a version of
    inbox/pages.py) and its consumer make it: `frame`, or json.dumps of `page`'s body."""
    if hasattr(pages, "frame"):
        return pages.frame(scope, cursor)
    head = {"type": "snapshot"} if cursor is None else {"type": "page", "after": cursor}
    return json.dumps({**head, **pages.page(scope, cursor)})


def measure(user, cursor, repeat: int, versions: dict) -> dict:
    """Each version's figures for `repeat` messages, the versions taking turns (round-robin)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from approvals.visibility import reviewer_scope

    times = {name: [] for name in versions}
    cpu = {name: [] for name in versions}
    for n in range(repeat):
        names = list(versions) if n % 2 == 0 else list(reversed(versions))  # neither always goes first
        for name in names:
            started, cpu_started = time.perf_counter(), time.process_time()
            message(versions[name], reviewer_scope(user), cursor)
            times[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - cpu_started)
    figures = {}
    for name, pages in versions.items():
        with CaptureQueriesContext(connection) as captured:
            text = message(pages, reviewer_scope(user), cursor)
        body = json.loads(text)
        ordered = sorted(times[name])
        figures[name] = {
            "p50": statistics.median(ordered) * 1000,
            "cpu": statistics.median(cpu[name]) * 1000,
            "p99": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
            "queries": len(captured),
            "bytes": len(text.encode()),
            "cards": len(body["cards"]),
            "total": body["total"],
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--deep", type=int, default=7_500, help="the later page starts after this card")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument(
        "--reference",
        metavar="REV",
        help="also build each page as the git revision REV did, taking turns with this tree's code",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="a page of 100 from 150, built 3 times: checks the bench still runs"
    )
    options = parser.parse_args()
    if options.smoke:
        options.pending, options.deep, options.repeat = 150, 120, 3

    ensure_database(os.environ.get("DATABASE_URL", ""))
    setup_django()
    from approvals.models import Approval, ApprovalStatus
    from inbox import pages as inbox_pages

    added = fill(options.pending)
    user = reviewer()
    queue = inbox_pages.queue_ordered(Approval.objects.filter(status=ApprovalStatus.PENDING))
    deep = inbox_pages.encode_cursor(
        queue.values_list("escalation_rank", "risk_rank", "expires_at", "pk")[options.deep - 1]
    )
    versions = {"this tree": inbox_pages}
    if options.reference:
        versions = {options.reference: reference_pages(options.reference), **versions}

    print(
        f"python {platform.python_version()} · {os.cpu_count()} cpus · load average before "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} · {added} cards added"
    )
    print(
        f"{'page':<18} {'code':<12} {'p50 ms':>8} {'p99 ms':>8} {'cpu ms':>7} {'queries':>8} {'bytes':>9} "
        f"{'cards':>6} {'total':>7}"
    )
    for name, cursor in [("page 1", None), (f"after card {options.deep}", deep)]:
        figures = measure(user, cursor, options.repeat, versions)
        for code, f in figures.items():
            print(
                f"{name:<18} {code:<12} {f['p50']:>8.1f} {f['p99']:>8.1f} {f['cpu']:>7.1f} {f['queries']:>8} "
                f"{f['bytes']:>9} {f['cards']:>6} {f['total']:>7}"
            )
        if options.reference:
            new, old = figures["this tree"], figures[options.reference]
            print(
                f"{'':<18} {'new / old':<12} {new['p50'] / old['p50']:>8.2f} {new['p99'] / old['p99']:>8.2f} "
                f"{new['cpu'] / old['cpu']:>7.2f}"
            )
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
