"""The hot paths' raw SQL on SQLite, the database `make run` uses (the suite itself runs on PostgreSQL).

tests/sqlite_flow.py runs in a subprocess on a scratch SQLite file: migrate,
seed_tools and seed_demo (`make run`'s steps), then a gate allow, a retry and a
reused call id, a suspend, the same suspend again, the same again once its client can no longer
park (still that card), one refused over the pending
limit, a re-link refused while the card is open, a reviewer's approval, a resume refused once the
session's patient changed (context_changed, audited) and then one that proceeds, and its replay, a cold replay of another
approved call, a card escalated at 0.6 of its TTL and not at 0.4, verify_audit, the session's history (read as text: ids, times and
parts), the database guards (append-only audit, monotone taint) after every migration, and every
row a hot path reads with core/rows.py's `reader` built as the ORM loads it.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

FLOW = Path(__file__).resolve().parent / "sqlite_flow.py"


def test_the_approval_loop_runs_on_sqlite(tmp_path):
    env = {name: value for name, value in os.environ.items() if name not in ("REDIS_URL", "DATABASE_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    process = subprocess.run(
        [sys.executable, str(FLOW), str(tmp_path / "demo-agent.key")],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert process.returncode == 0, process.stderr[-4000:]
    seen = json.loads(process.stdout.strip().splitlines()[-1])
    assert seen == {
        "allow": [200, "allow"],
        "allow_retry": 200,
        "reused_id": [409, "tool_call_conflict"],
        "suspend": [202, "suspended"],
        "relink_refused": [409, "session_has_open_approvals"],
        "suspend_again": [202, True],
        "parked_regate": [202, True],
        "over_limit": [429, "too_many_pending", False],
        "decision": [200, "approved"],
        "teams_with_user": [True, True],
        "context_changed": [409, "context_changed", "approved", 1],
        "resume": [200, True, "executing"],
        "suspended_at": [True, None],
        "replay": [409, "approval_consumed"],
        "prior_grant": [200, "approval.prior-grant", "executing"],
        "escalated": [False, True],
        "sweep_idle": [1, "sweep_idle"],
        "audit_intact": True,
        "history": ["u1", "run_<run>", "u2"],
        "linked": [
            ["u1", ["text"]],
            ["u2", ["text"]],
            # read-1 (allowed), rx-1 (approved, resumed), rx-3 (approved), rx-3b (ran on rx-3's grant)
            [
                "a1",
                [
                    "text",
                    "input-available",
                    "approval-responded",
                    "data-approval-decision",
                    "approval-responded",
                    "data-approval-decision",
                    "input-available",
                ],
            ],
        ],
        "guards": {"audit_update": "refused", "audit_delete": "refused", "taint_cleared": "refused"},
        "read_as_loaded": [],
    }
