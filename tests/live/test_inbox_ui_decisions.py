"""Deciding in the inbox in real Chromium, decision API mocked: approve, reject, edit, decline, and the errors.

The page is the production template and tests/live/inbox_harness.py plays the server.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from rest_framework.exceptions import PermissionDenied

from agents.auth import IsReviewer
from approvals.resume_validation import validate_resume_data
from core.errors import InvalidPayload, ResumeSchemaRejected
from tests.live.card_actions import assert_decided, assert_kept_for_another_try, reason_is_required, reject
from tests.live.inbox_page import CSRF_TOKEN
from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser


# --------------------------------------------------------------------------- decisions


def test_approve_posts_approved_true_with_csrf_header(inbox):
    card = approval_card()
    inbox.open([card])

    inbox.card(card["id"]).get_by_test_id("approve").click()

    decision = inbox.wait_for_decisions(1)[0]
    assert decision.approval_id == card["id"]
    assert decision.body == {"approved": True, "payload_hash": card["payload_hash"]}  # what was shown
    assert decision.headers["x-csrftoken"] == CSRF_TOKEN
    assert decision.headers["content-type"] == "application/json"
    expect(inbox.card(card["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Approved")


def test_reject_requires_a_reason(inbox):
    card = approval_card()
    shown = inbox.open_one(card)

    shown.get_by_test_id("reject").click()
    reason_is_required(shown, "Dose exceeds renal adjustment for eGFR 48")

    assert_decided(inbox, shown, {"approved": False, "reason": "Dose exceeds renal adjustment for eGFR 48"}, "Rejected")


def test_invalid_json_blocks_approve_edited(inbox):
    card = approval_card(args={"dose_mg": 500})
    shown = inbox.open_one(card)
    shown.get_by_test_id("edit").click()
    editor = shown.get_by_test_id("args-editor")
    approve_edited = shown.get_by_test_id("approve-edited")
    expect(editor).to_be_focused()

    editor.fill('{"dose_mg": 250,')
    expect(shown.get_by_test_id("args-editor-error")).to_contain_text("Not valid JSON")
    expect(approve_edited).to_be_disabled()

    editor.fill("[250]")
    expect(shown.get_by_test_id("args-editor-error")).to_contain_text("must be a JSON object")
    expect(approve_edited).to_be_disabled()

    editor.fill('{"dose_mg": 250, "dose_mg": 500}')
    expect(shown.get_by_test_id("args-editor-error")).to_contain_text('Duplicate key "dose_mg"')
    expect(approve_edited).to_be_disabled()

    editor.fill('{"dose_mg": 250}')
    expect(approve_edited).to_be_enabled()
    assert inbox.decisions == []


def test_valid_edit_shows_a_diff_and_posts_edited_args(inbox):
    card = approval_card(args={"drug": "amoxicillin", "dose_mg": 500, "frequency": "8-hourly", "route": "oral"})
    shown = inbox.open_one(card)
    shown.get_by_test_id("edit").click()

    edited = {"drug": "amoxicillin", "dose_mg": 250, "route": "oral", "note": "renal dosing"}
    shown.get_by_test_id("args-editor").fill(
        '{"drug": "amoxicillin", "dose_mg": 250, "route": "oral", "note": "renal dosing"}'
    )

    diff = shown.get_by_test_id("args-diff")
    expect(diff.locator('[data-op="changed"][data-path="dose_mg"]')).to_contain_text("500")
    expect(diff.locator('[data-op="changed"][data-path="dose_mg"]')).to_contain_text("250")
    expect(diff.locator('[data-op="removed"][data-path="frequency"]')).to_be_visible()
    expect(diff.locator('[data-op="added"][data-path="note"]')).to_contain_text("renal dosing")
    shown.get_by_test_id("approve-edited").click()

    assert_decided(
        inbox,
        shown,
        {"approved": True, "edited_args": edited, "payload_hash": card["payload_hash"]},
        "Approved with 3 edits",
    )


def test_cancel_edit_restores_the_original_args(inbox):
    card = approval_card(args={"dose_mg": 500})
    shown = inbox.open_one(card)
    shown.get_by_test_id("edit").click()
    shown.get_by_test_id("args-editor").fill('{"dose_mg": 5000}')

    shown.get_by_test_id("edit-cancel").click()

    expect(shown.get_by_test_id("edit-panel")).to_be_hidden()
    expect(shown.get_by_test_id("approve")).to_be_visible()
    shown.get_by_test_id("edit").click()
    assert '"dose_mg": 500' in shown.get_by_test_id("args-editor").input_value()
    expect(shown.get_by_test_id("approve-edited")).to_be_disabled()  # nothing changed yet


def test_conflict_removes_the_card_and_says_so(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.rows.decide(card["id"], "approved", "alice")  # decided elsewhere, its push not here yet

    inbox.card(card["id"]).get_by_test_id("approve").click()

    expect(inbox.card(card["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Not applied")
    expect(inbox.feedback).to_contain_text("already decided")


def test_decided_elsewhere_while_approving_says_who_won(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.during_next(card["id"], lambda: inbox.remove(card["id"], status="rejected", decided_by="bob"))

    inbox.card(card["id"]).get_by_test_id("approve").click()

    expect(inbox.card(card["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Rejected by bob")


def test_network_error_keeps_the_card_and_the_typed_reason(inbox):
    card = approval_card()
    shown = inbox.open_one(card)
    inbox.fail_network_next(card["id"])

    reject(shown, "Allergy documented in GP record")

    assert_kept_for_another_try(
        shown, "Network problem", "reject-reason", "Allergy documented in GP record", "reject-submit"
    )

    shown.get_by_test_id("reject-submit").click()  # the retry goes through
    expect(shown).to_have_count(0)
    assert [d.body for d in inbox.decisions] == [{"approved": False, "reason": "Allergy documented in GP record"}] * 2


def test_invalid_payload_keeps_the_card_and_the_edit(inbox):
    card = approval_card(args={"dose_mg": 500})
    shown = inbox.open_one(card)
    inbox.refuse_next(card["id"], InvalidPayload("Integers beyond 2^53-1 are not accepted."))
    shown.get_by_test_id("edit").click()
    shown.get_by_test_id("args-editor").fill('{"dose_mg": 250}')

    shown.get_by_test_id("approve-edited").click()

    assert_kept_for_another_try(
        shown, "Integers beyond 2^53-1 are not accepted.", "args-editor", '{"dose_mg": 250}', "approve-edited"
    )


def test_forbidden_keeps_the_card_and_says_not_permitted(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.refuse_next(card["id"], PermissionDenied(IsReviewer.message))  # what a lapsed login gets

    inbox.card(card["id"]).get_by_test_id("approve").click()

    expect(inbox.card(card["id"]).get_by_test_id("card-error")).to_contain_text(f"Not permitted: {IsReviewer.message}")
    expect(inbox.card(card["id"]).get_by_test_id("approve")).to_be_enabled()


def test_rejected_resume_schema_reports_the_failed_run(inbox):
    card = clarification_card(missing=[{"name": "note"}])
    inbox.open([card])
    # What the server's own check says of an answer the page would not send.
    refusal = " ".join(validate_resume_data(card["resume_schema"], {"note": ""}))
    inbox.refuse_next(card["id"], ResumeSchemaRejected(refusal))
    shown = inbox.card(card["id"])
    shown.locator('[name="note"]').fill("x")

    shown.get_by_test_id("clarify-submit").click()

    expect(shown).to_have_count(0)
    expect(inbox.feedback).to_contain_text("has failed")
    expect(inbox.feedback).to_contain_text(refusal)


# --------------------------------------------------------------------------- declining a clarification


def test_declining_a_clarification_needs_a_reason_and_posts_approved_false(inbox):
    card = clarification_card()
    shown = inbox.open_one(card)

    shown.get_by_test_id("decline").click()
    expect(shown.get_by_test_id("reject-panel")).to_be_visible()
    expect(shown.get_by_test_id("clarify-form")).to_be_hidden()
    reason_is_required(shown, "Booking is for the cardiology team to decide")

    assert_decided(
        inbox,
        shown,
        {"approved": False, "reason": "Booking is for the cardiology team to decide"},
        "Declined: scheduling.book_followup",
    )


def test_cancelling_a_decline_brings_back_the_answers_typed_so_far(inbox):
    card = clarification_card()
    shown = inbox.open_one(card)
    shown.locator('input[name="duration_min"]').fill("30")

    shown.get_by_test_id("decline").click()
    shown.get_by_test_id("reject-reason").fill("Not sure yet")
    shown.get_by_test_id("reject-cancel").click()

    expect(shown.get_by_test_id("reject-panel")).to_be_hidden()
    expect(shown.locator('input[name="duration_min"]')).to_have_value("30")
    shown.get_by_test_id("decline").click()
    expect(shown.get_by_test_id("reject-reason")).to_have_value("")  # Cancel throws the reason away
    assert inbox.decisions == []


def test_a_failed_decline_keeps_the_card_and_the_reason(inbox):
    card = clarification_card()
    shown = inbox.open_one(card)
    inbox.refuse_next(card["id"], InvalidPayload("A rejection needs a reason."))

    reject(shown, "Wrong patient on the request", opener="decline")

    assert_kept_for_another_try(
        shown, "A rejection needs a reason.", "reject-reason", "Wrong patient on the request", "reject-submit"
    )
