"""What the audit log records (SPEC section 8): every step of a HITL cycle, in order, each with
its actor, its patient and its chain; logins; and no row without a named actor."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from approvals.expiry import expire_due
from audit import chain as audit_chain
from audit import trail as audit
from audit.models import AuditEvent
from core.hashing import canonical_json, canonical_json_fast
from runs.models import Run
from runs.sweep import abort_idle_runs
from tests.approvals.hint_strategies import json_values
from tests.helpers.approval_loop import approve, gate, resume, suspend
from tests.helpers.personas import PASSWORD, logged_in
from tests.helpers.runs import open_executing_run

MRN = "MRN-30001"


def trail(run_id) -> list[tuple]:
    return list(
        AuditEvent.objects.filter(run_id=run_id).order_by("id").values_list("kind", "actor", "decision", "patient_ref")
    )


def test_one_full_hitl_cycle_is_exactly_these_rows_in_this_order(api, rita, catalog):
    run_id = open_executing_run(api, patient_ref=MRN, autonomy="autonomous", age_band="adult")
    approval = suspend(api, run_id)
    approve(logged_in(rita), approval["id"])
    assert resume(api, run_id, approval["id"]).status_code == 200
    assert (
        api.post(
            f"/api/v1/runs/{run_id}/tool-calls/call-1/result/", {"output": {"id": "rx-1"}}, format="json"
        ).status_code
        == 200
    )
    assert api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "completed"}, format="json").status_code == 200

    assert trail(run_id) == [
        ("verdict", "client:ward-agent", "require_approval", MRN),
        ("suspend", "client:ward-agent", "suspended", MRN),
        ("decision", "user:rita", "approved", MRN),
        ("consume", "client:ward-agent", "consumed", MRN),
        ("result", "client:ward-agent", "ok", MRN),
        ("run_close", "client:ward-agent", "completed", MRN),
    ]
    rows = AuditEvent.objects.filter(run_id=run_id).order_by("id")
    assert {row.chain for row in rows} == {f"session:{rows[0].session_id}"}
    assert [row.seq for row in rows] == list(range(1, 7))  # the session's chain, nothing in between
    assert rows[0].op == "create" and rows[0].tool == "prescribe_medication"
    assert {decision for _, _, decision, _ in trail(run_id)} <= set(audit.DECISIONS)
    assert audit_chain.verify().intact


def test_the_patient_ref_is_the_one_the_session_had_when_the_row_was_written(api):
    run_id = open_executing_run(api, patient_ref="MRN-1")
    gate(api, run_id, tool="search_patients", op="", args={"name": "Ada"})
    run = Run.objects.select_related("session").get(pk=run_id)
    session = run.session
    session.patient_ref = "MRN-2"
    session.save()
    gate(api, run_id, tool="search_patients", op="", args={"name": "Bo"}, tool_call_id="call-2")
    assert [ref for *_, ref in trail(run_id)] == ["MRN-1", "MRN-2"]


def test_the_sweep_and_a_supersede_are_named_actors(api, settings):
    first = open_executing_run(api, title="first")
    session_id = Run.objects.get(pk=first).session_id
    second = api.post(f"/api/v1/sessions/{session_id}/runs/", {}, format="json").json()["id"]
    assert AuditEvent.objects.get(run_id=first, kind="run_close").actor == audit.SUPERSEDE
    Run.objects.filter(pk=second).update(last_activity_at=timezone.now() - timedelta(days=1))
    assert abort_idle_runs(timezone.now()) == 1
    assert AuditEvent.objects.get(run_id=second, kind="run_close").actor == audit.SWEEP


def test_an_expiry_by_the_sweep_is_the_sweeps(api):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    assert expire_due(now=timezone.now() + timedelta(days=1)) == 1
    expiry = AuditEvent.objects.get(approval_id=approval["id"], kind="expiry")
    assert (expiry.actor, expiry.decision, expiry.data["cause"]) == ("sweep", "expired", "deadline passed")


def test_closing_a_run_withdraws_its_approvals_on_record_by_the_agent_that_closed_it(api):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "user_stopped"}, format="json")
    withdrawal = AuditEvent.objects.get(approval_id=approval["id"], kind="withdrawal")
    assert (withdrawal.actor, withdrawal.decision, withdrawal.data["terminal_reason"]) == (
        "client:ward-agent",
        "withdrawn",
        "user_stopped",
    )


def test_a_supersede_withdraws_the_open_cards_as_the_supersede(api):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    api.post(f"/api/v1/sessions/{Run.objects.get(pk=run_id).session_id}/runs/", {}, format="json")
    withdrawal = AuditEvent.objects.exclude(kind="suspend").get(approval_id=approval["id"])
    assert (withdrawal.kind, withdrawal.actor, withdrawal.decision, withdrawal.data) == (
        "withdrawal",
        audit.SUPERSEDE,
        "withdrawn",
        {"cause": "run ended", "terminal_reason": "superseded"},
    )
    assert not AuditEvent.objects.filter(approval_id=approval["id"], kind="expiry").exists()


@pytest.mark.parametrize("nameless", [{}, {"actor_system": "system"}, {"actor_system": "user:mallory"}])
def test_a_row_without_a_named_actor_is_refused(db, nameless):
    with pytest.raises(ValueError, match="needs its actor"):
        audit.record(audit.Kind.REGISTRY_CHANGE, tool="x", **nameless)
    assert not AuditEvent.objects.exists()


# --- logins ------------------------------------------------------------------------------------


def test_a_login_to_the_inbox_is_audited(rita):
    Client().post("/accounts/login/", {"username": "rita", "password": PASSWORD})
    login = AuditEvent.objects.get(kind="login")
    assert (login.actor, login.actor_user, login.decision, login.chain) == ("user:rita", rita, "succeeded", "global")
    assert login.data["via"] == "inbox"


def test_a_failed_admin_login_is_audited_without_the_password(carl):
    Client().post("/admin/login/", {"username": "carl", "password": "wrong horse"})
    failed = AuditEvent.objects.get(kind="login_failed")
    assert (failed.actor, failed.decision, failed.data["username"], failed.data["via"]) == (
        "anonymous",
        "failed",
        "carl",
        "admin",
    )
    assert "wrong horse" not in str(failed.data) and "password" not in failed.data


# --- the canonical form the chain hashes -------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": [True, None, "é\n\u001f\u007f"]},
        1.5,
        1e21,
        -0.0,
        2**53 - 1,
        {"\U0001f600": 1, "\ue000": 2},
    ],
)
def test_the_fast_canonical_form_is_rfc_8785(value):
    assert canonical_json_fast(value) == canonical_json(value)


def test_the_fast_canonical_form_is_rfc_8785_on_any_json():
    from hypothesis import given, settings

    @settings(max_examples=400, deadline=None)
    @given(json_values)
    def check(value):
        try:
            expected = canonical_json(value)
        except ValueError:
            with pytest.raises(ValueError):
                canonical_json_fast(value)
            return
        assert canonical_json_fast(value) == expected

    check()
