"""The one suspend funnel (SPEC sections 4 and 5): identity, and one transaction with its audit row."""

import dataclasses
import hashlib
from datetime import timedelta

import pytest
import rfc8785

from approvals import suspend as suspend_module
from approvals.models import Approval, ReasonCode, ToolCall
from approvals.suspend import SuspendRequest, persist_suspend, read_reason_code
from audit import trail as audit
from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, approval_row, approve, clarify, decide, gate, resume, suspend
from tests.helpers.clock import frozen_clock, later
from tests.helpers.runs import open_executing_run, run_state

ROUTE = [{"name": "route", "hint": {"options": ["oral", "iv"]}}]


def suspended_events(run_id):
    return RunEvent.objects.filter(run_id=run_id, kind="approval.suspended")


def request(**overrides) -> SuspendRequest:
    fields = {
        "tool_call_id": "call-1",
        "step_id": "step-1",
        "tool": "prescribe_medication",
        "op": "create",
        "args": PRESCRIPTION,
        "rule_id": "mutate.high-tier-always-approval",
        "explanation": "High-tier writes need a clinician.",
        "hitl_tier": "high",
    }
    return SuspendRequest(**{**fields, **overrides})


def test_the_same_suspend_twice_returns_the_same_approval(api):
    run_id = open_executing_run(api)
    first = suspend(api, run_id)
    second = suspend(api, run_id)
    assert second["id"] == first["id"]
    assert Approval.objects.count() == 1


def test_a_repeated_suspend_writes_no_second_event(api):
    run_id = open_executing_run(api)
    suspend(api, run_id)
    suspend(api, run_id)
    assert suspended_events(run_id).count() == 1
    assert AuditEvent.objects.filter(kind=AuditEvent.Kind.SUSPEND).count() == 1


def test_a_repeated_suspend_with_reordered_args_is_the_same_suspend(api):
    run_id = open_executing_run(api)
    first = suspend(api, run_id, args={"drug": "amoxicillin", "dose": "500 mg"})
    second = suspend(api, run_id, args={"dose": "500 mg", "drug": "amoxicillin"})
    assert second["id"] == first["id"]


def test_other_args_on_the_same_step_are_a_new_approval(api):
    run_id = open_executing_run(api)
    first = suspend(api, run_id)
    second = suspend(api, run_id, args={**PRESCRIPTION, "dose": "1 g"}, tool_call_id="call-2")
    assert second["id"] != first["id"]
    assert suspended_events(run_id).count() == 2


def test_a_clarification_after_the_approval_on_the_same_step_is_a_new_approval(api):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    response = clarify(api, run_id, ROUTE)
    assert response.status_code == 202
    clarification = response.json()["approval"]
    assert clarification["id"] != approval["id"]
    assert clarification["reason_code"] == "clarification"
    assert suspended_events(run_id).count() == 2


def test_the_reason_code_has_one_reader():
    assert read_reason_code({"kind": "clarification"}) == ReasonCode.CLARIFICATION
    assert read_reason_code({"kind": "approval"}) == ReasonCode.APPROVAL
    assert read_reason_code({}) == ReasonCode.APPROVAL
    assert read_reason_code({"kind": "Clarification"}) == ReasonCode.APPROVAL


def test_the_payload_hash_is_sha256_of_rfc8785_json(api):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    assert approval["payload_hash"] == hashlib.sha256(rfc8785.dumps(PRESCRIPTION)).hexdigest()


# Stored on every approval as its suspend identity (one_approval_per_suspend): a change to how
# it is computed would make a repeated suspend of an existing card a second card.
SUSPEND_IDENTITIES = [
    (
        dict(args={"drug": "amoxicillin", "dose": "500 mg", "days": 7}),
        "1e89bcf67b7d552085149e6ccdc835d1be31649d6f5a643856791ff3f131fea4",
    ),
    (
        dict(args={"drug": "amoxicillin"}, kind="clarification", message="Which dose?", missing=("dose",)),
        "f609334151f6ca19c686a4bcc6eec8ceaba62308879fb129102aea87ec7118d7",
    ),
]


@pytest.mark.parametrize("fields, expected", SUSPEND_IDENTITIES)
def test_the_contract_hash_of_a_suspend_is_stable(fields, expected):
    request = SuspendRequest(
        tool_call_id="t",
        step_id="s",
        tool="prescribe_medication",
        op="create",
        rule_id="r",
        explanation="",
        hitl_tier=None,
        **fields,
    )
    reference = hashlib.sha256(
        rfc8785.dumps(
            {
                "tool": request.tool,
                "op": request.op,
                "args": request.args,
                "reason_code": request.reason_code,
                "missing": list(request.missing),
            }
        )
    ).hexdigest()
    assert request.contract_hash == reference == expected


def test_the_contract_hash_takes_the_fast_encoder(monkeypatch):
    # The reason code as an enum sent every suspend's contract to the pure-Python encoder.
    def reference_refused(value):
        raise AssertionError(f"the reference encoder was asked for {value!r}")

    monkeypatch.setattr(rfc8785, "dumps", reference_refused)
    request = SuspendRequest(
        tool_call_id="t",
        step_id="s",
        tool="prescribe_medication",
        op="create",
        args={"drug": "amoxicillin"},
        rule_id="r",
        explanation="",
        hitl_tier=None,
    )
    assert len(request.contract_hash) == 64


def test_the_ttl_comes_from_the_setting(api, settings):
    settings.CONDOR_APPROVAL_TTL_SECONDS = 120
    run_id = open_executing_run(api)
    row = Approval.objects.get(pk=suspend(api, run_id)["id"])
    assert row.expires_at - row.requested_at == timedelta(seconds=120)


def audit_down(monkeypatch):
    """The suspend's own audit row fails: the last write of a park, with the gate's verdict row."""
    real_record = audit.record_entries

    def broken_for_suspends(events, **kwargs):
        if any(event.kind == audit.Kind.SUSPEND for event in events):
            raise RuntimeError("audit store unavailable")
        return real_record(events, **kwargs)

    monkeypatch.setattr(audit, "record_entries", broken_for_suspends)


def test_a_suspend_whose_audit_row_cannot_be_written_does_not_happen(api, monkeypatch):
    # No best-effort audit: the row commits with the park or neither does.
    audit_down(monkeypatch)
    run_id = open_executing_run(api)
    with pytest.raises(RuntimeError):
        persist_suspend(run_id, request())
    assert not Approval.objects.exists()
    assert run_state(run_id) == ("executing", "")
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.SUSPEND).exists()


def outbox_down(monkeypatch):
    """The suspend's event fails once its statement has run: the approval, the run's state
    (and a gate's ledger row) are written by then, in the same transaction."""
    real_event_write = suspend_module.event_write

    def failed(ids):
        raise RuntimeError("outbox insert failed")

    monkeypatch.setattr(
        suspend_module,
        "event_write",
        lambda *args, **kwargs: dataclasses.replace(real_event_write(*args, **kwargs), done=failed),
    )


def test_a_failing_event_write_leaves_no_approval_and_the_run_executing(api, monkeypatch):
    run_id = open_executing_run(api)
    outbox_down(monkeypatch)
    with pytest.raises(RuntimeError):
        persist_suspend(run_id, request())
    assert not Approval.objects.exists()
    assert run_state(run_id) == ("executing", "")


@pytest.mark.parametrize("failure", [outbox_down, audit_down])
def test_a_gate_call_whose_park_fails_leaves_no_ledger_row_or_verdict(api, monkeypatch, failure):
    from django.test import Client

    run_id = open_executing_run(api)
    failure(monkeypatch)
    agent = Client(raise_request_exception=False)
    response = agent.post(
        f"/api/v1/runs/{run_id}/tool-calls/",
        {
            "tool_call_id": "call-1",
            "step_id": "step-1",
            "tool": "prescribe_medication",
            "args": PRESCRIPTION,
        },
        content_type="application/json",
        HTTP_AUTHORIZATION=api._credentials["HTTP_AUTHORIZATION"],
    )
    assert response.status_code == 500
    assert not ToolCall.objects.exists()
    assert not Approval.objects.exists()
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.VERDICT).exists()
    assert run_state(run_id) == ("executing", "")


def test_the_funnel_refuses_a_run_that_is_not_active(api):
    run_id = open_executing_run(api)
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "user_stopped"}, format="json")
    response = clarify(api, run_id, ROUTE)
    assert (response.status_code, response.json()["error"]) == (409, "run_not_active")
    assert not Approval.objects.exists()


def test_a_retried_suspend_on_a_closed_run_is_refused(api):
    # The retry must not answer "suspended" for a run that can no longer park.
    run_id = open_executing_run(api)
    assert clarify(api, run_id, ROUTE).status_code == 202
    api.post(f"/api/v1/runs/{run_id}/close/", {"reason": "user_stopped"}, format="json")
    response = clarify(api, run_id, ROUTE)
    assert (response.status_code, response.json()["error"]) == (409, "run_not_active")


# --- the same suspend again is the same card only while that card is open ------------------------


def test_the_same_suspend_after_its_approval_was_used_is_refused(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    approve(reviewer_http, approval["id"])
    assert resume(api, run_id, approval["id"]).status_code == 200
    response = gate(api, run_id)
    assert (response.status_code, response.json()["error"]) == (409, "approval_consumed")
    assert run_state(run_id) == ("executing", "")
    assert suspended_events(run_id).count() == 1
    assert ToolCall.objects.get(tool_call_id="call-1").decision == "allow"


def test_the_same_clarification_after_its_answer_was_used_is_refused(api, reviewer_http):
    run_id = open_executing_run(api)
    approval = clarify(api, run_id, ROUTE).json()["approval"]
    decide(reviewer_http, approval["id"], {"values": {"route": "oral"}})
    assert resume(api, run_id, approval["id"]).status_code == 200
    response = clarify(api, run_id, ROUTE)
    assert (response.status_code, response.json()["error"]) == (409, "approval_consumed")
    assert run_state(run_id) == ("executing", "")
    assert suspended_events(run_id).count() == 1


def test_the_same_suspend_past_its_deadline_is_refused_before_any_sweep(api, monkeypatch, settings):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    frozen_clock(monkeypatch, later(settings.CONDOR_APPROVAL_TTL_SECONDS + 1))
    response = gate(api, run_id)
    assert (response.status_code, response.json()["error"]) == (410, "approval_expired")
    assert approval_row(approval["id"]).status == "pending"  # the sweep has not run
    assert suspended_events(run_id).count() == 1
    assert run_state(run_id) == ("suspended", "")
