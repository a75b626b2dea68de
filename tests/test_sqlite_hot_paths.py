"""The hot paths' raw SQL on SQLite, the database `make run` uses (the suite itself runs on PostgreSQL).

tests/sqlite_flow.py runs in a subprocess on a scratch SQLite file: migrate,
seed_tools and seed_demo (`make run`'s steps), then a gate allow, a retry and a
reused call id, a suspend, a reviewer's approval, a resume and its replay, and
verify_audit.
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
    process = subprocess.run([sys.executable, str(FLOW), str(tmp_path / "demo-agent.key")], env=env,
                             capture_output=True, text=True, timeout=240)
    assert process.returncode == 0, process.stderr[-4000:]
    seen = json.loads(process.stdout.strip().splitlines()[-1])
    assert seen == {
        "allow": [200, "allow"],
        "allow_retry": 200,
        "reused_id": [409, "tool_call_conflict"],
        "suspend": [202, "suspended"],
        "decision": [200, "approved"],
        "resume": [200, True, "executing"],
        "replay": [409, "approval_consumed"],
        "sweep_idle": [1, "sweep_idle"],
        "audit_intact": True,
    }
