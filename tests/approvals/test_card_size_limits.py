"""Every part of a card has a size limit, so no card outgrows an inbox frame (inbox/pages.py).

The page cuts a card's args when it is too big for a frame, but nothing else: a
clarification's form (built from the agent's hints) and a reviewer's reason (shown on a
four-eyes card) must be bounded where they come in. Too big is the caller's error, a
400 that changes nothing.
"""

import json

import pytest
from django.contrib.auth.models import User

from approvals.decisions import REASON_MAX_CHARS
from approvals.models import Approval
from approvals.resume_schemas import FORM_MAX_BYTES
from approvals.visibility import reviewer_scope
from audit.models import AuditEvent
from inbox import pages as inbox_pages
from runs.models import RunEvent
from tests.helpers.approval_loop import approval_row, assert_still_waiting, clarify, decide, parked_run
from tests.helpers.runs import open_executing_run, run_state

pytestmark = pytest.mark.django_db


def wide_form(fields: int = 50, options: int = 400) -> list[dict]:
    """As many fields as a clarification may name, each a long pick list: well under the 1 MB body limit."""
    return [
        {"name": f"field_{n}", "hint": {"options": [f"option {n}-{k}" for k in range(options)]}} for n in range(fields)
    ]


def test_a_clarification_whose_form_is_too_big_for_a_card_is_refused_and_changes_nothing(api):
    run_id = open_executing_run(api)
    events = RunEvent.objects.filter(run_id=run_id).count()

    response = clarify(api, run_id, wide_form())

    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert "form" in response.json()["detail"]
    assert not Approval.objects.filter(run_id=run_id).exists()
    assert run_state(run_id) == ("executing", "")
    assert RunEvent.objects.filter(run_id=run_id).count() == events


def test_a_form_just_under_the_limit_still_parks_and_its_page_fits_a_frame(api, rita):
    run_id = open_executing_run(api)
    fields = wide_form(fields=8, options=100)
    assert len(json.dumps(fields)) < FORM_MAX_BYTES

    response = clarify(api, run_id, fields)

    assert response.status_code == 202, response.content
    page = inbox_pages.page(reviewer_scope(User.objects.get(pk=rita.pk)))
    assert [card["id"] for card in page["cards"]] == [response.json()["approval"]["id"]]
    assert len(json.dumps({"type": "snapshot", **page}).encode()) <= inbox_pages.PAGE_MAX_BYTES


def test_a_reason_longer_than_the_limit_is_refused_and_changes_nothing(api, reviewer_http):
    run_id, approval = parked_run(api)
    audited = AuditEvent.objects.count()

    for body in (
        {"approved": True, "reason": "x" * (REASON_MAX_CHARS + 1), "payload_hash": approval["payload_hash"]},
        {"approved": False, "reason": "x" * (REASON_MAX_CHARS + 1)},
    ):
        response = decide(reviewer_http, approval["id"], body)

        assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert_still_waiting(run_id, approval)
    assert AuditEvent.objects.count() == audited


def test_a_reason_at_the_limit_is_taken(api, reviewer_http):
    run_id, approval = parked_run(api)

    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": "x" * REASON_MAX_CHARS})

    assert response.status_code == 200, response.content
    assert approval_row(approval["id"]).decision_reason == "x" * REASON_MAX_CHARS
