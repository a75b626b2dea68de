"""An escalation whose e-mail could not be sent says so (SPEC section 10): an `escalation` audit row
with decision `email_failed` naming the error, counted on the admin dashboard. A patient ref with a
line break made Django refuse the subject (BadHeaderError) and no e-mail left, while the audit row
said `emailed: N`."""

import smtplib

import pytest
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend
from django.test import override_settings

from approvals.escalation import escalate_due
from audit.models import AuditEvent
from governance.admin_dashboard import dashboard
from sessions_app.models import Session
from tests.governance.test_admin import admin_client
from tests.helpers.approval_loop import approval_row, parked_run


class RefusingBackend(EmailBackend):
    def send_messages(self, messages):
        raise smtplib.SMTPRecipientsRefused({"rita@ward.example": (550, b"no such mailbox")})


@pytest.fixture
def rita_has_email(rita):
    rita.email = "rita@ward.example"
    rita.save()


def parked_card(api, patient_ref="MRN-7") -> str:
    run_id, approval = parked_run(api, {"patient_ref": "MRN-7"})
    # The API refuses a line break in a patient ref now; rows written before it still hold one.
    Session.objects.filter(runs__id=run_id).update(patient_ref=patient_ref)
    return approval["id"]


def escalate(approval_id, capture):
    row = approval_row(approval_id)
    with capture(execute=True):
        assert escalate_due(now=row.requested_at + (row.expires_at - row.requested_at) * 0.6) == 1


def escalation_rows(approval_id):
    return list(
        AuditEvent.objects.filter(kind="escalation", approval_id=approval_id)
        .order_by("id")
        .values_list("decision", "data")
    )


def test_a_header_django_refuses_is_audited_as_a_failed_email(api, rita_has_email, django_capture_on_commit_callbacks):
    approval_id = parked_card(api, patient_ref="MRN-7\nBcc: x@evil.example")
    escalate(approval_id, django_capture_on_commit_callbacks)
    assert not mail.outbox
    (escalated, data), (failed, failure) = escalation_rows(approval_id)
    assert (escalated, data["recipients"], "emailed" in data) == ("escalated", 1, False)
    assert failed == "email_failed"
    assert failure["recipients"] == 1 and failure["error"].startswith("BadHeaderError")


@override_settings(EMAIL_BACKEND=f"{__name__}.RefusingBackend")
def test_a_mail_server_refusal_is_audited_as_a_failed_email(api, rita_has_email, django_capture_on_commit_callbacks):
    approval_id = parked_card(api)
    escalate(approval_id, django_capture_on_commit_callbacks)
    assert approval_row(approval_id).escalated_at is not None  # the escalation stands
    decisions = [decision for decision, _ in escalation_rows(approval_id)]
    assert decisions == ["escalated", "email_failed"]
    assert escalation_rows(approval_id)[1][1]["error"].startswith("SMTPRecipientsRefused")


def test_an_email_that_left_leaves_no_failure_row(api, rita_has_email, django_capture_on_commit_callbacks):
    approval_id = parked_card(api)
    escalate(approval_id, django_capture_on_commit_callbacks)
    assert len(mail.outbox) == 1
    assert [decision for decision, _ in escalation_rows(approval_id)] == ["escalated"]


def test_the_dashboard_counts_escalation_emails_not_sent(api, carl, rita_has_email, django_capture_on_commit_callbacks):
    assert dashboard().escalation_emails_failed_24h == 0
    escalate(parked_card(api, patient_ref="MRN-7\r\n"), django_capture_on_commit_callbacks)
    assert dashboard().escalation_emails_failed_24h == 1
    page = admin_client(carl).get("/admin/").content.decode()
    assert "Escalation e-mails not sent" in page
    assert "decision=email_failed" in page
