"""The approval loop on SQLite, as `make run` serves it: run by tests/test_sqlite_hot_paths.py in a subprocess.

The suite runs on PostgreSQL; the hot paths' raw SQL has SQLite forms (the audit
append, the registry stamp, the ledger upsert, the UPDATE … RETURNING locks, the
writes PostgreSQL folds into one statement, the approval's INSERT under the
pending limit), and this is where they run, and so does a sweep pass (bulk_create and
IN lists where PostgreSQL has COPY and arrays). It does `make run`'s database steps (migrate,
seed_tools, seed_demo) on the SQLite file named by DATABASE_URL, then one
approval loop over HTTP, and prints what it saw as JSON on its last line.

    DATABASE_URL=sqlite:////tmp/x/db.sqlite3 python tests/sqlite_flow.py /tmp/x/demo-agent.key
"""

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from approvals import visibility  # noqa: E402
from approvals.auth_backends import ReviewerAwareModelBackend  # noqa: E402
from approvals.escalation import escalate_due  # noqa: E402
from approvals.models import Approval  # noqa: E402
from audit.chain import verify  # noqa: E402
from audit.models import AuditEvent  # noqa: E402
from condor.sweeps import sweep  # noqa: E402
from demo.management.commands import seed_demo  # noqa: E402
from runs.models import Run  # noqa: E402
from sessions_app.models import Session  # noqa: E402

PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}
REFILL = {**PRESCRIPTION, "drug": "doxycycline"}


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
    messages = f"/api/v1/sessions/{session['id']}/messages/"
    agent.post(
        messages, {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Okafor, 7 days"}]}, format="json"
    )

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
    parked_at = Run.objects.get(pk=run_id).suspended_at
    # The card binds the session's patient: no re-link while it is open.
    relinked = agent.patch(f"/api/v1/sessions/{session['id']}/", {"patient_ref": "MRN-OTHER"}, format="json")
    seen["relink_refused"] = [relinked.status_code, relinked.json().get("error")]
    again = gate("rx-1", "prescribe_medication", "create", PRESCRIPTION)
    seen["suspend_again"] = [again.status_code, again.json()["approval"]["id"] == approval_id]
    # A verdict that changed since the park (the client can no longer park) does not settle it.
    client = Run.objects.get(pk=run_id).session.client
    client.can_park = False
    client.save()
    still = gate("rx-1", "prescribe_medication", "create", PRESCRIPTION)
    seen["parked_regate"] = [still.status_code, still.json()["approval"]["id"] == approval_id]
    client.can_park = True
    client.save()
    with override_settings(CONDOR_MAX_PENDING_PER_CLIENT=1):  # rx-1 is pending: no room for another
        refused = gate("rx-2", "prescribe_medication", "create", REFILL)
    seen["over_limit"] = [
        refused.status_code,
        refused.json().get("error"),
        Approval.objects.filter(tool_call_id="rx-2").exists(),
    ]

    def decide(approval):
        return reviewer.post(
            f"/api/v1/approvals/{approval}/decision/", json.dumps({"approved": True}), content_type="application/json"
        )

    decided = decide(approval_id)
    seen["decision"] = [decided.status_code, decided.json().get("status")]
    # The reviewer's teams, read in the statement that loads them (SQLite's JSON form), as their own read reads them.
    loaded = ReviewerAwareModelBackend().get_user(User.objects.get(username="reviewer").pk)
    with_user, own_read = loaded._condor_review_teams, visibility.read_teams(loaded.pk)
    seen["teams_with_user"] = [sorted(map(repr, with_user)) == sorted(map(repr, own_read)), len(with_user) > 1]

    def resume():
        body = {"approval_id": approval_id, "args": PRESCRIPTION}
        return agent.post(f"/api/v1/runs/{run_id}/resume/", body, format="json")

    # A re-link that got past the check: the resume reads the session's context in its consume
    # statement (SQLite's RETURNING) and refuses; the refusal's audit row outlives its rollback.
    Session.objects.filter(pk=session["id"]).update(patient_ref="MRN-OTHER")
    refused = resume()
    seen["context_changed"] = [
        refused.status_code,
        refused.json().get("error"),
        Approval.objects.get(pk=approval_id).status,
        AuditEvent.objects.filter(decision="context_changed").count(),
    ]
    Session.objects.filter(pk=session["id"]).update(patient_ref="")
    resumed = resume()
    seen["resume"] = [resumed.status_code, resumed.json().get("proceed"), Run.objects.get(pk=run_id).state]
    seen["suspended_at"] = [parked_at is not None, Run.objects.get(pk=run_id).suspended_at]
    replayed = resume()
    seen["replay"] = [replayed.status_code, replayed.json().get("error")]

    # Cold replay: the same call again, once approved, runs on that grant (and unparks the run).
    decide(gate("rx-3", "prescribe_medication", "create", REFILL).json()["approval"]["id"])
    granted = gate("rx-3b", "prescribe_medication", "create", REFILL)
    seen["prior_grant"] = [granted.status_code, granted.json().get("rule_id"), Run.objects.get(pk=run_id).state]

    # History reads ids, times and parts as SQLite writes them: the run, with no message of its own,
    # goes between the messages written before and after its calls; once the client links one, the
    # run's parts follow the client's own.
    agent.post(messages, {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]}, format="json")
    history = agent.get(f"/api/v1/sessions/{session['id']}/history/").json()
    # The run's own message is named after it as the API writes its id (SQLite stores it without hyphens).
    seen["history"] = [message["id"].replace(run_id, "<run>") for message in history]
    agent.post(
        messages,
        {"id": "a1", "role": "assistant", "run": run_id, "parts": [{"type": "text", "text": "Prescribed."}]},
        format="json",
    )
    history = agent.get(f"/api/v1/sessions/{session['id']}/history/").json()
    seen["linked"] = [
        [message["id"], [part.get("state", part["type"]) for part in message["parts"]]] for message in history
    ]
    # The sweep's portable path (bulk_create, IN lists, one UPDATE per chain head): the run,
    # left idle, is closed by a pass, and its session's chain still holds.
    Run.objects.filter(pk=run_id).update(last_activity_at=timezone.now() - timedelta(days=2))
    seen["sweep_idle"] = [sweep()["runs_idle"], Run.objects.get(pk=run_id).terminal_reason]
    seen["escalated"] = escalated_by_time(agent)
    seen["audit_intact"] = verify().intact
    seen["guards"] = guards_hold(session["id"])
    seen["read_as_loaded"] = read_as_loaded(approval_id)
    return seen


def read_as_loaded(approval_id) -> list:
    """Every row of each model a hot path reads with `reader`, selected by its columns and built by it,
    against the ORM's instance: the fields that differ ([] when none). SQLite hands back text for
    UUIDs, datetimes (naive) and JSON, and 0 or 1 for booleans; a decided card adds non-ASCII,
    nested JSON and a datetime with microseconds, and a deleted session its time."""
    from tests.helpers.rows import models_read_by_reader, unlike_the_orm

    at = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)
    Approval.objects.filter(pk=approval_id).update(
        resume_data={"note": "naïve café ✓ 日本", "nested": {"deep": [1, 2.5, None, True]}}, escalated_at=at
    )
    Session.objects.filter(pk=Approval.objects.get(pk=approval_id).session_id).update(deleted_at=at)
    return [
        [model.__name__, str(pk), repr(unlike)]
        for model in models_read_by_reader()
        for pk in model._base_manager.values_list("pk", flat=True)
        for unlike in [unlike_the_orm(model, pk)]
        if unlike
    ]


def escalated_by_time(agent) -> list[bool]:
    """Escalation's due condition in SQLite's own time arithmetic: a card of a session of its own,
    whether it is escalated at 0.4 of its TTL, then at 0.6."""
    session = agent.post("/api/v1/sessions/", {}, format="json").json()["id"]
    run_id = agent.post(f"/api/v1/sessions/{session}/runs/", {}, format="json").json()["id"]
    agent.post(f"/api/v1/runs/{run_id}/transition/", {"to": "executing"}, format="json")
    body = {
        "tool_call_id": "rx-9",
        "step_id": "step-9",
        "tool": "prescribe_medication",
        "op": "create",
        "args": {**REFILL, "days": 9},
    }
    card = Approval.objects.get(
        pk=agent.post(f"/api/v1/runs/{run_id}/tool-calls/", body, format="json").json()["approval"]["id"]
    )
    ttl, seen = card.expires_at - card.requested_at, []
    for fraction in (0.4, 0.6):
        escalate_due(now=card.requested_at + ttl * fraction)
        card.refresh_from_db()
        seen.append(card.escalated_at is not None)
    return seen


def guards_hold(session_id: str) -> dict:
    """Whether the SQLite triggers still refuse what they guard after every migration (a table
    rebuild drops a table's triggers: sessions_app/sqlite_guards.py)."""
    from django.db import IntegrityError, transaction

    Session.objects.filter(pk=session_id).update(tainted=True)
    statements = {
        "audit_update": "UPDATE approvals_auditevent SET decision = decision",
        "audit_delete": "DELETE FROM approvals_auditevent",
        "taint_cleared": "UPDATE sessions_app_session SET tainted = 0",
    }
    held = {}
    for name, sql in statements.items():
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql)
            held[name] = "allowed"
        except IntegrityError:
            held[name] = "refused"
    return held


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
