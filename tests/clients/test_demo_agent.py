"""`manage.py demo_agent`: one round against a live server while rita approves over the API."""

import io

import pytest
from django.core.management import call_command

from approvals.models import Approval, ToolCall
from runs.models import Run
from sessions_app.models import Session

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ANSWERS = {"severity": "moderate", "reactions": ["rash", "hives"]}


def rita_approves(approval):
    if approval.reason_code == "clarification":
        return {"values": ANSWERS}
    if approval.tool == "prescribe_medication":  # she lowers the dose, as reviewers do
        return {"approved": True, "edited_args": {**approval.args, "dose_mg": 500}}
    return {"approved": True}


def test_one_round_plays_every_scenario_through_to_its_results(live_agent, rita_deciding):
    out = io.StringIO()
    with rita_deciding(rita_approves) as rita:
        call_command(
            "demo_agent",
            base_url=f"http://{live_agent.host}",
            key=live_agent.key,
            loops=1,
            stagger=0.2,
            wait=30,
            stdout=out,
        )
    log = out.getvalue()
    assert all(status == 200 for status, _ in rita.answers), rita.answers
    # Every session ran to completion, each in its own run.
    runs = Run.objects.all()
    assert runs.count() == Session.objects.count() == 7, log
    assert {run.terminal_reason for run in runs} == {"completed"}, log
    # The cards that reached the inbox: everything but the autonomous vitals.
    assert sorted(approval.tool for approval in rita.seen) == sorted(
        ["prescribe_medication", "change_medication", "send_email", "send_email", "record_allergy", "sign_document"]
    )
    assert {a.status for a in Approval.objects.all()} == {"consumed"}
    # Decisions flowed back: the edited dose ran, and every call's result was reported.
    prescription = ToolCall.objects.get(tool="prescribe_medication")
    assert prescription.args["dose_mg"] == 1000 and prescription.output["dose_mg"] == 500
    assert not ToolCall.objects.filter(decision="allow", reported_at__isnull=True).exists()
    # The untrusted upload tainted its session, so its email needed a human.
    upload_session = Session.objects.get(patient_ref="MRN-70345")
    assert upload_session.tainted
    assert Approval.objects.get(session=upload_session).rule_id == "taint.external-approval"
    # Every call said why, after the agent said what it would do, in a conversation the clinician opened.
    assert all(call.metadata.get("rationale") for call in ToolCall.objects.all())
    assert all(
        {"user", "assistant"} <= set(session.messages.values_list("role", flat=True))
        for session in Session.objects.all()
    )
    allergy = ToolCall.objects.get(tool="record_allergy", decision="allow")
    assert allergy.args == {"patient_ref": "MRN-55190", "substance": "penicillin", **ANSWERS}
