"""The admin index dashboard (issue 10): what is waiting, how fast people decide, what the gate hits, when jobs ran."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.expiry import expire_due
from approvals.models import Approval
from audit import trail as audit
from condor.sweeps import sweep
from governance.admin_dashboard import dashboard
from runs import heartbeats
from runs.models import Heartbeat
from tests.governance.test_admin import admin_client
from tests.helpers.approval_loop import gate, suspend
from tests.helpers.runs import open_executing_run


def park(api, n: int) -> list[Approval]:
    """`n` pending approvals, one per run."""
    ids = [suspend(api, open_executing_run(api, patient_ref=f"MRN-{n}-{i}"))["id"] for i in range(n)]
    return list(Approval.objects.filter(pk__in=ids).order_by("requested_at"))


def decide_after(approval, seconds: int, *, by, status="approved"):
    """Mark `approval` decided `seconds` after it was requested (the clock, not the workflow, is under test)."""
    requested = timezone.now() - timedelta(hours=1)
    Approval.objects.filter(pk=approval.pk).update(
        requested_at=requested, decided_at=requested + timedelta(seconds=seconds), decided_by=by, status=status
    )


@pytest.fixture
def decided(api, catalog, rita):
    approvals = park(api, 6)
    for approval, seconds in zip(approvals, (10, 20, 30, 40, 100), strict=False):
        decide_after(approval, seconds, by=rita)
    decide_after(approvals[4], 100, by=rita, status="rejected")
    return approvals


def test_time_to_decision_is_the_median_and_p90_of_the_last_24_hours(decided):
    board = dashboard()
    assert board.decisions_24h == 5
    assert board.median_time_to_decision == timedelta(seconds=30)
    assert board.p90_time_to_decision == timedelta(seconds=100)
    assert board.rejections_24h == 1


def test_pending_now_and_the_oldest_pending(decided):
    board = dashboard()
    assert board.pending_now == 1
    assert board.oldest_pending_id == decided[5].pk


def test_a_card_past_its_deadline_is_not_pending_now_before_the_sweep_ran(api, catalog):
    (waiting,) = park(api, 1)
    board = dashboard(now=waiting.expires_at + timedelta(seconds=1))
    assert (board.pending_now, board.oldest_pending_id) == (0, None)


def test_decisions_older_than_24_hours_are_left_out(decided):
    board = dashboard(now=timezone.now() + timedelta(hours=25))
    assert (board.decisions_24h, board.median_time_to_decision, board.rejections_24h) == (0, None, 0)


def test_an_expiry_counts_as_an_expiry_not_as_a_decision(api, catalog):
    park(api, 1)
    assert expire_due(now=timezone.now() + timedelta(days=1)) == 1
    board = dashboard()
    assert (board.expiries_24h, board.decisions_24h, board.pending_now) == (1, 0, 0)


def test_a_card_withdrawn_by_a_new_run_counts_as_a_withdrawal_not_an_expiry(api, catalog):
    (card,) = park(api, 1)
    assert api.post(f"/api/v1/sessions/{card.session_id}/runs/", {}, format="json").status_code == 201
    board = dashboard()
    assert (board.expiries_24h, board.withdrawals_24h, board.decisions_24h) == (0, 1, 0)


def test_the_index_shows_withdrawals_apart_from_expiries(api, catalog, carl):
    withdrawn, expired = park(api, 2)
    api.post(f"/api/v1/sessions/{withdrawn.session_id}/runs/", {}, format="json")
    assert expire_due(now=timezone.now() + timedelta(days=1)) == 1
    html = admin_client(carl).get("/admin/").content.decode()
    assert '<td id="condor-expiries">1</td>' in html
    assert '<td id="condor-withdrawals">1</td>' in html


def test_top_rule_ids_count_the_gate_verdicts_of_the_last_24_hours(api, catalog):
    run_id = open_executing_run(api)
    for i in range(3):
        gate(api, run_id, tool="search_patients", op="", args={"name": "Ada"}, tool_call_id=f"r{i}", step_id=f"s{i}")
    gate(api, run_id, tool="record_vitals", op="update", args={"pulse": 80}, tool_call_id="w", step_id="w")
    top = dict(dashboard().top_rule_ids)
    assert top["read.allow"] == 3
    assert top["mutate.low-tier-supervised-approval"] == 1
    assert dashboard(now=timezone.now() + timedelta(hours=25)).top_rule_ids == []


def test_the_dashboard_reads_audit_rows_only_within_the_window_and_in_few_queries(decided):
    with CaptureQueriesContext(connection) as queries:
        dashboard()
    assert len(queries) <= 12
    audit_queries = [q["sql"] for q in queries if "approvals_auditevent" in q["sql"]]
    window = [sql for sql in audit_queries if '"approvals_auditevent"."at" >=' in sql]
    newest_check = [sql for sql in audit_queries if "'verify'" in sql and sql.rstrip().endswith("LIMIT 1")]
    assert len(window) >= 2 and len(newest_check) == 1
    assert len(window) + len(newest_check) == len(audit_queries)


def test_a_sweep_records_when_it_ran(db):
    assert dashboard().sweep is None
    before = timezone.now()
    counts = sweep()
    beat = Heartbeat.objects.get(name=heartbeats.SWEEP)
    assert beat.details == counts
    assert before <= beat.at <= timezone.now()


def test_the_index_shows_the_dashboard_to_compliance(carl, decided):
    sweep()
    page = admin_client(carl).get("/admin/")
    html = page.content.decode()
    assert 'id="condor-dashboard"' in html
    assert "median 30 s, p90 1 min 40 s over 5 decisions" in html
    assert "Sweep last ran" in html and "never" in html.split("Audit chains verified")[1][:200]


def test_the_index_shows_the_last_sweep_pass_counts(carl, db):
    heartbeats.beat(
        heartbeats.SWEEP,
        {
            "approvals_expired": 3,
            "runs_approval_expired": 2,
            "runs_suspend_ttl": 0,
            "runs_idle": 7,
            "events_republished": -1,
            "idempotency_pruned": 0,
        },
    )
    html = admin_client(carl).get("/admin/").content.decode()
    counts = re.findall(r"<li>(.*?)</li>", html.split('id="condor-sweep-counts">')[1].split("</td>")[0])
    assert counts == [
        "approvals expired: 3",
        "runs closed, approvals all expired: 2",
        "runs closed, suspended too long: 0",
        "runs closed, idle: 7",
        "events re-published: <strong>failed</strong>",
        "idempotency keys pruned: 0",
    ]


def test_the_index_shows_how_long_the_last_sweep_pass_took(carl, db):
    heartbeats.beat(heartbeats.SWEEP, {"runs_idle": 1000, "seconds": 0.4567})
    html = admin_client(carl).get("/admin/").content.decode()
    assert '<span id="condor-sweep-took">took 0.46 s</span>' in html


def test_the_index_shows_when_the_audit_chains_were_verified_and_how_it_went(carl, db):
    audit.record("verify", actor_user=carl, decision="broken", data={"broken": "row 12"})
    html = admin_client(carl).get("/admin/").content.decode()
    verified = html.split("Audit chains verified")[1][:300]
    assert "never" not in verified and timezone.now().strftime("%Y-%m-%d") in verified
    assert "user:carl" in verified and "<strong>broken</strong>" in verified


def test_a_staff_user_without_view_rights_sees_no_dashboard(db):
    from django.contrib.auth.models import User

    bare = User.objects.create(username="temp", is_staff=True)
    page = admin_client(bare).get("/admin/")
    assert page.status_code == 200 and b'id="condor-dashboard"' not in page.content
