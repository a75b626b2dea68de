"""The egress rows of the hardening table, through POST runs/{id}/tool-calls/: an autonomous,
consented adult's send_email is allowed only to the tool's hosts, however the recipient is hidden."""

import pytest

from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run

TYPED_ADULT = {"autonomy": "autonomous", "consent": True, "age_band": "adult"}


def send(api, args):
    run_id = open_executing_run(api, **TYPED_ADULT)
    response = gate(api, run_id, tool="send_email", op="send", args=args)
    assert response.status_code == 200, response.content
    return response.json()["decision"], response.json()["rule_id"]


@pytest.mark.parametrize(
    "args",
    [
        {"to": "mailto:dr@clinic.example?bcc=x@evil.example"},
        {"recipients": {"x@evil.example": {"name": "Bob"}}},
        {"links": {"https://evil.example/x": "click"}},
        {"to": '"x@evil.example"@clinic.example'},
        {"to": "x@evil.example@clinic.example"},
        {"to": "x%evil.example@clinic.example"},
        {"to": "dr@clinic.example x@evil.example"},
    ],
    ids=repr,
)
def test_a_hidden_recipient_outside_the_allow_list_is_blocked(api, args):
    assert send(api, args) == ("blocked", "egress.host-not-allowed")


def test_the_same_send_to_an_allowed_recipient_is_allowed(api):
    assert send(
        api,
        {
            "to": "mailto:dr@clinic.example?cc=nurse@clinic.example",
            "recipients": {"dr@clinic.example": {"name": "Gray"}},
        },
    ) == ("allow", "comms.autonomous-consented-allow")
