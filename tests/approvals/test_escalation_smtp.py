"""An escalation email goes out through the SMTP server EMAIL_URL names (SPEC section 10).

The other escalation tests read Django's locmem outbox; this one points the
settings `env_email` builds at a small SMTP server on a local port and checks
that the message arrives there.
"""

import socketserver
import threading

import pytest
from django.test import override_settings

from approvals.escalation import escalate_due
from core.env import env_email
from tests.helpers.approval_loop import approval_row, suspend
from tests.helpers.runs import open_executing_run


class _Smtp(socketserver.StreamRequestHandler):
    """Just enough SMTP for smtplib: greet, accept the envelope, keep the message."""

    def handle(self):
        def say(line):
            self.wfile.write(line.encode() + b"\r\n")

        say("220 fake smtp")
        recipients = []
        while line := self.rfile.readline():
            verb = line[:4].decode().upper()
            if verb == "RCPT":
                recipients.append(line.decode().split(":", 1)[1].strip().strip("<>"))
            if verb == "DATA":
                say("354 end with .")
                body = b"".join(iter(self.rfile.readline, b".\r\n")).decode()
                self.server.received.append((recipients, body))
            if verb == "QUIT":
                say("221 bye")
                return
            say("250 ok")


@pytest.fixture
def smtp_server():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Smtp)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_the_escalation_email_goes_through_the_configured_smtp_server(
    api, rita, smtp_server, monkeypatch, django_capture_on_commit_callbacks
):
    rita.email = "rita@ward.example"
    rita.save()
    parked = suspend(api, open_executing_run(api, care_unit="ICU", patient_ref="MRN-7"))["id"]
    row = approval_row(parked)
    monkeypatch.setenv("EMAIL_URL", f"smtp://127.0.0.1:{smtp_server.server_address[1]}/?timeout=5")

    with override_settings(**env_email("EMAIL_URL")), django_capture_on_commit_callbacks(execute=True):
        assert escalate_due(now=row.requested_at + (row.expires_at - row.requested_at) * 0.6) == 1

    [(recipients, message)] = smtp_server.received
    assert recipients == ["rita@ward.example"]
    assert "Escalated: prescribe_medication for MRN-7" in message
