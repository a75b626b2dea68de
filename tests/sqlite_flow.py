"""The approval loop on SQLite, as `make run` serves it: run by tests/test_sqlite_hot_paths.py in a subprocess.

The suite runs on PostgreSQL; the hot paths' raw SQL has SQLite forms (the audit
append, the registry stamp, the ledger upsert, the UPDATE … RETURNING locks),
and this is where they run, and so does a sweep pass (bulk_create and IN lists where
PostgreSQL has COPY and arrays). It does `make run`'s database steps (migrate,
seed_tools, seed_demo) on the SQLite file named by DATABASE_URL, then one
approval loop over HTTP, and prints what it saw as JSON on its last line.

    DATABASE_URL=sqlite:////tmp/x/db.sqlite3 python tests/sqlite_flow.py /tmp/x/demo-agent.key
"""

import json
import os
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from approvals.audit_chain import verify  # noqa: E402
from approvals.management.commands import seed_demo  # noqa: E402
from runs.models import Run  # noqa: E402
from runs.sweep import sweep  # noqa: E402

PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}


def main(key_file: str) -> dict:
    assert connection.vendor == "sqlite", connection.vendor
    call_command("migrate", verbosity=0)
    call_command("seed_tools", verbosity=0)
    # The demo key goes to a scratch file, not the working tree's var/.
    seed_demo.KEY_FILE = Path(key_file)
    call_command("seed_demo", verbosity=0)
    setup_test_environment()  # the test client's host is allowed

    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Api-Key {Path(key_file).read_text().strip()}")
    reviewer = Client()
    reviewer.force_login(User.objects.get(username="reviewer"))

    session = agent.post("/api/v1/sessions/", {"care_unit": "Ward 4"}, format="json").json()
    run_id = agent.post(f"/api/v1/sessions/{session['id']}/runs/", {}, format="json").json()["id"]
    agent.post(f"/api/v1/runs/{run_id}/transition/", {"to": "executing"}, format="json")
    seen = {}

    def gate(call_id, tool, op, args):
        body = {"tool_call_id": call_id, "step_id": "step-1", "tool": tool, "op": op, "args": args}
        return agent.post(f"/api/v1/runs/{run_id}/tool-calls/", body, format="json")

    allowed = gate("read-1", "get_patient_summary", "", {"patient_id": "p-1042", "section": "all"})
    seen["allow"] = [allowed.status_code, allowed.json().get("decision")]
    # The same call again with its keys in another order is a retry; other args are a conflict.
    retried = gate("read-1", "get_patient_summary", "", {"section": "all", "patient_id": "p-1042"})
    seen["allow_retry"] = retried.status_code
    reused = gate("read-1", "get_patient_summary", "", {"patient_id": "p-9"})
    seen["reused_id"] = [reused.status_code, reused.json().get("error")]

    parked = gate("rx-1", "prescribe_medication", "create", PRESCRIPTION)
    approval_id = parked.json()["approval"]["id"]
    seen["suspend"] = [parked.status_code, Run.objects.get(pk=run_id).state]

    decided = reviewer.post(f"/api/v1/approvals/{approval_id}/decision/", json.dumps({"approved": True}),
                            content_type="application/json")
    seen["decision"] = [decided.status_code, decided.json().get("status")]

    def resume():
        body = {"approval_id": approval_id, "args": PRESCRIPTION}
        return agent.post(f"/api/v1/runs/{run_id}/resume/", body, format="json")

    resumed = resume()
    seen["resume"] = [resumed.status_code, resumed.json().get("proceed"), Run.objects.get(pk=run_id).state]
    replayed = resume()
    seen["replay"] = [replayed.status_code, replayed.json().get("error")]
    # The sweep's portable path (bulk_create, IN lists, one UPDATE per chain head): the run,
    # left idle, is closed by a pass, and its session's chain still holds.
    Run.objects.filter(pk=run_id).update(last_activity_at=timezone.now() - timedelta(days=2))
    seen["sweep_idle"] = [sweep()["runs_idle"], Run.objects.get(pk=run_id).terminal_reason]
    seen["audit_intact"] = verify().intact
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
