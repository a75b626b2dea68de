"""Small building blocks for the approval-loop tests: open a run, gate a call, decide, resume.

Agents speak through a DRF `APIClient` carrying their key; reviewers through a
Django test `Client` logged in with CSRF enforced (conftest.logged_in), so every
decision here sends the CSRF token the inbox page would.
"""

import json
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from approvals.models import Approval
from runs.models import Run

PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}
CHART_READ = {"patient_id": "p-1042"}


def open_executing_run(api, **session_fields) -> str:
    """A new session for `api`'s client with one run already executing. Returns the run id."""
    session = api.post("/api/v1/sessions/", session_fields, format="json")
    assert session.status_code == 201, session.content
    run = api.post(f"/api/v1/sessions/{session.json()['id']}/runs/", {}, format="json")
    assert run.status_code == 201, run.content
    moved = api.post(f"/api/v1/runs/{run.json()['id']}/transition/", {"to": "executing"}, format="json")
    assert moved.status_code == 200, moved.content
    return run.json()["id"]


def gate(api, run_id, *, tool="prescribe_medication", args=None, step_id="step-1", tool_call_id="call-1",
         op="create", **extra):
    body = {"tool_call_id": tool_call_id, "step_id": step_id, "tool": tool, "op": op,
            "args": PRESCRIPTION if args is None else args, **extra}
    return api.post(f"/api/v1/runs/{run_id}/tool-calls/", body, format="json")


def suspend(api, run_id, **call) -> dict:
    """Gate a call that needs approval; returns the approval the 202 answer carries."""
    response = gate(api, run_id, **call)
    assert response.status_code == 202, response.content
    return response.json()["approval"]


def clarify(api, run_id, missing, *, step_id="step-1", tool_call_id="call-1", tool="prescribe_medication",
            args=None, message="Which route should the antibiotic take?", **extra):
    body = {"tool_call_id": tool_call_id, "step_id": step_id, "tool": tool, "message": message,
            "missing": missing, "args": PRESCRIPTION if args is None else args, **extra}
    return api.post(f"/api/v1/runs/{run_id}/clarifications/", body, format="json")


def post_json(http, path, body, *, csrf=True):
    """POST a JSON body from a browser session, with the CSRF token the page would send."""
    headers = {"HTTP_X_CSRFTOKEN": http.cookies["csrftoken"].value} if csrf else {}
    raw = body if isinstance(body, str) else json.dumps(body)
    return http.post(path, raw, content_type="application/json", **headers)


def decide(http, approval_id, body, **kwargs):
    return post_json(http, f"/api/v1/approvals/{approval_id}/decision/", body, **kwargs)


def approve(http, approval_id, **extra) -> dict:
    response = decide(http, approval_id, {"approved": True, **extra})
    assert response.status_code == 200, response.content
    return response.json()


def resume(api, run_id, approval_id, args=None, *, key=None):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    body = {"approval_id": str(approval_id), "args": PRESCRIPTION if args is None else args}
    return api.post(f"/api/v1/runs/{run_id}/resume/", body, format="json", **headers)


def raw_post(api, path, raw: str, **headers):
    """POST bytes the JSON encoder would never produce (duplicate keys, NaN, huge integers)."""
    return api.generic("POST", path, raw, content_type="application/json", **headers)


def run_state(run_id) -> tuple[str, str]:
    run = Run.objects.get(pk=run_id)
    return run.state, run.terminal_reason


def approval_row(approval_id) -> Approval:
    return Approval.objects.get(pk=approval_id)


def frozen_clock(monkeypatch, at):
    """Make every `timezone.now()` in Condor return `at` (services read the clock through it)."""
    monkeypatch.setattr(timezone, "now", lambda: at)
    return at


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


def lock_waiters(pid) -> list:
    """What PostgreSQL backend `pid` is waiting on: `["Lock"]` while it queues for a row lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        return [row[0] for row in cursor.fetchall()]


def backend_pid() -> int:
    """This thread's PostgreSQL backend (Django connections are per thread)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def all_at_once(calls) -> list:
    """Run each callable in `calls` on its own thread, released together by a barrier; their results.

    For races between different people (each call carries its own browser), on real
    PostgreSQL connections (a `transaction=True` test).
    """
    import threading

    barrier, results, lock = threading.Barrier(len(calls)), [], threading.Lock()

    def worker(call):
        try:
            barrier.wait()
            result = call()
            with lock:
                results.append(result)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "a call never returned"
    return results


def pending_cards_in_bulk(client, count: int, *, care_unit: str = "", tiers=("high", "low", None),
                          args=None, escalate_every: int = 0) -> list[Approval]:
    """`count` pending approvals written straight to the database (no gate call each), one run
    per ten, with a mix of tiers and deadlines, some escalated: enough to page through."""
    from sessions_app.models import Session

    now = timezone.now()
    rows = []
    for start in range(0, count, 10):
        session = Session.objects.create(client=client, title=f"bulk {start}", patient_ref=f"MRN-{start}",
                                         care_unit=care_unit)
        run = Run.objects.create(session=session, autonomy="guarded", state="suspended", last_activity_at=now)
        for n in range(start, min(count, start + 10)):
            rows.append(Approval(
                run=run, session=session, tool="prescribe_medication", op="create", tool_call_id=f"call-{n}",
                step_id=f"step-{n}", contract_hash=f"{n:064d}", reason_code="approval", rule_id="bulk",
                hitl_tier=tiers[n % len(tiers)], args=PRESCRIPTION if args is None else args, payload_hash="0" * 64,
                requested_at=now, expires_at=now + timedelta(seconds=600 + (n * 7919) % 3000),
                escalated_at=now if escalate_every and n % escalate_every == 0 else None))
    return Approval.objects.bulk_create(rows)
