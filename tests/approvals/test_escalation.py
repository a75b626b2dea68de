"""Escalation (SPEC section 10): a card undecided at CONDOR_ESCALATE_AFTER_FRACTION of its TTL.

The sweep escalates it once: `escalated_at` set, an `escalation` audit row, a
card.updated push and one email to the reviewers who can see it. Never twice,
not even from two sweeps at once; never a decided card, not even one decided (or
escalated) between the sweep's read of the due cards and its write.
"""

from datetime import timedelta

import pytest
from django.core import mail
from django.db import transaction
from django.test import override_settings

from approvals.escalation import escalate_due
from approvals.models import ReviewTeam
from audit.models import AuditEvent
from condor.sweeps import sweep
from runs.models import Run, RunEvent
from sessions_app.models import Session
from tests.helpers.approval_loop import approval_row, approve, parked_run, suspend
from tests.helpers.personas import person
from tests.helpers.races import all_at_once
from tests.helpers.runs import open_executing_run


@pytest.fixture
def parked(api) -> str:
    return parked_run(api, {"care_unit": "ICU"})[1]["id"]


def at_fraction(approval_id, fraction: float):
    row = approval_row(approval_id)
    return row.requested_at + (row.expires_at - row.requested_at) * fraction


@pytest.fixture
def reviewers_with_email(rita, rob):
    rita.email, rob.email = "rita@ward.example", "rob@ward.example"
    rita.save()
    rob.save()


def test_a_card_is_not_escalated_before_half_its_ttl(parked):
    assert escalate_due(now=at_fraction(parked, 0.49)) == 0
    assert approval_row(parked).escalated_at is None


def test_a_card_undecided_at_half_its_ttl_is_escalated(parked, api, reviewers_with_email):
    now = at_fraction(parked, 0.5) + timedelta(seconds=1)
    assert escalate_due(now=now) == 1
    assert approval_row(parked).escalated_at == now
    row = AuditEvent.objects.get(kind="escalation")
    assert (row.actor, row.decision, str(row.approval_id)) == ("sweep", "escalated", parked)
    assert api.get(f"/api/v1/approvals/{parked}/").json()["escalated_at"] == now.isoformat().replace("+00:00", "Z")
    pushed = RunEvent.objects.get(kind="approval.escalated").inbox
    assert pushed["type"] == "card.updated" and pushed["card"]["escalated_at"] == now.isoformat()


@override_settings(CONDOR_ESCALATE_AFTER_FRACTION=0.8)
def test_the_fraction_is_a_setting(parked):
    assert escalate_due(now=at_fraction(parked, 0.7)) == 0
    assert escalate_due(now=at_fraction(parked, 0.81)) == 1


def test_it_is_escalated_only_once(parked, reviewers_with_email, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        escalate_due(now=at_fraction(parked, 0.6))
        assert escalate_due(now=at_fraction(parked, 0.9)) == 0
    assert AuditEvent.objects.filter(kind="escalation").count() == 1
    assert len(mail.outbox) == 1


def test_the_reviewers_who_can_see_it_are_emailed(
    parked, reviewers_with_email, rita, rob, django_capture_on_commit_callbacks
):
    ReviewTeam.objects.create(name="ICU", care_units=["ICU"]).members.set([rita])
    ReviewTeam.objects.create(name="Cardiology", care_units=["CARDIO"]).members.set([rob])
    with django_capture_on_commit_callbacks(execute=True):
        escalate_due(now=at_fraction(parked, 0.6))
    [email] = mail.outbox
    assert email.to == ["rita@ward.example"]
    assert "prescribe_medication" in email.subject


def test_a_decided_card_is_not_escalated(parked, reviewer_http):
    approve(reviewer_http, parked)
    assert escalate_due(now=at_fraction(parked, 0.6)) == 0


def between_the_sweeps_read_and_its_write(monkeypatch, meanwhile):
    """The sweep has read the due cards; `meanwhile(approval_id)` runs before it locks and writes each one."""
    from approvals import escalation

    write = escalation.escalate_one

    def interleaved(pk, run_id, now):
        meanwhile(str(pk))
        return write(pk, run_id, now)

    monkeypatch.setattr(escalation, "escalate_one", interleaved)
    return write


def test_a_card_decided_after_the_sweep_read_it_is_not_escalated(
    parked, reviewer_http, reviewers_with_email, monkeypatch, django_capture_on_commit_callbacks
):
    between_the_sweeps_read_and_its_write(monkeypatch, lambda approval_id: approve(reviewer_http, approval_id))
    with django_capture_on_commit_callbacks(execute=True):
        assert escalate_due(now=at_fraction(parked, 0.6)) == 0
    assert (approval_row(parked).status, approval_row(parked).escalated_at) == ("approved", None)
    assert not AuditEvent.objects.filter(kind="escalation").exists()
    assert mail.outbox == []


def test_a_card_another_sweep_escalated_after_this_one_read_it_is_not_escalated_again(
    parked, reviewers_with_email, monkeypatch, django_capture_on_commit_callbacks
):
    now = at_fraction(parked, 0.6)
    other_sweep = []
    write = between_the_sweeps_read_and_its_write(
        monkeypatch, lambda approval_id: other_sweep.append(write(approval_id, approval_row(approval_id).run_id, now))
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert escalate_due(now=now) == 0
    assert other_sweep == [1]
    assert AuditEvent.objects.filter(kind="escalation").count() == 1
    assert len(mail.outbox) == 1


def test_a_card_that_cannot_be_escalated_does_not_stop_the_others(api, monkeypatch):
    # SPEC section 6: one bad row never aborts the pass.
    from approvals import escalation

    broken, fine = parked_run(api)[1]["id"], parked_run(api)[1]["id"]
    real = escalation.reviewers_who_see

    def fails_for_one(approval):
        if str(approval.pk) == broken:
            raise RuntimeError("a bad row")
        return real(approval)

    monkeypatch.setattr(escalation, "reviewers_who_see", fails_for_one)
    assert escalate_due(now=max(at_fraction(broken, 0.6), at_fraction(fine, 0.6))) == 1
    assert approval_row(broken).escalated_at is None
    assert approval_row(fine).escalated_at is not None
    assert AuditEvent.objects.filter(kind="escalation").count() == 1


def test_the_sweep_escalates(parked):
    counts = sweep(now=at_fraction(parked, 0.6))
    assert counts["approvals_escalated"] == 1


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_sweeps_at_once_escalate_it_once(api):
    parked = suspend(api, open_executing_run(api))["id"]
    rita = person("rita", "reviewers")
    rita.email = "rita@ward.example"
    rita.save()
    now = at_fraction(parked, 0.6)
    assert sorted(all_at_once([lambda: escalate_due(now=now), lambda: escalate_due(now=now)])) == [0, 1]
    assert AuditEvent.objects.filter(kind="escalation").count() == 1
    assert len(mail.outbox) == 1


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_card_is_escalated_while_its_session_is_locked_elsewhere(api):
    # A result report or a rename holds the session's row; the escalation locks only the run
    # (skipping it when busy), so the session's lock does not make it pass the card over.
    run_id = open_executing_run(api)
    parked = suspend(api, run_id)["id"]
    session_id = Run.objects.get(pk=run_id).session_id
    now = at_fraction(parked, 0.6)
    with transaction.atomic():
        Session.objects.locked().get(pk=session_id)
        (escalated,) = all_at_once([lambda: escalate_due(now=now)])
    assert escalated == 1
    assert approval_row(parked).escalated_at == now
