"""The reviewer inbox front-end in real Chromium, with the websocket and decision API mocked.

The page is the production template; tests/live/inbox_harness.py plays the server.
Run: .venv/bin/pytest tests/live/test_inbox_ui.py -q
"""

from __future__ import annotations

import re
import time
from datetime import datetime

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.live.inbox_harness import (
    ARTIFACTS_DIR,
    CSRF_TOKEN,
    InboxHarness,
    approval_card,
    clarification_card,
    launch_chromium,
    render_template,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def chromium():
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, request):
    # Not UTC, so date-time bounds and answers prove they carry the right offset.
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Europe/Paris")
    context.set_default_timeout(5000)
    page = context.new_page()
    failures_before = request.session.testsfailed
    yield page
    # The call phase has been reported by now: keep a picture of what the reviewer saw.
    if request.session.testsfailed > failures_before:
        ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        try:
            page.screenshot(path=str(ARTIFACTS_DIR / f"{name}.png"), full_page=True)
        except Exception:  # noqa: BLE001 - a failed screenshot must not hide the failure
            pass
    context.close()


@pytest.fixture
def inbox(page):
    harness = InboxHarness(page)
    yield harness
    assert harness.page_errors == [], f"JavaScript errors on the page: {harness.page_errors}"
    assert harness.server_errors == [], f"harness errors: {harness.server_errors}"


# --------------------------------------------------------------------------- list


def test_snapshot_renders_cards_high_tier_first_then_soonest_expiry(inbox):
    low_late = approval_card(tier="low", expires_in=900)
    high_late = approval_card(tier="high", expires_in=800)
    untiered_soon = approval_card(tier=None, expires_in=100)
    high_soon = approval_card(tier="high", expires_in=300)
    low_soon = approval_card(tier="low", expires_in=200)

    inbox.open([low_late, high_late, untiered_soon, high_soon, low_soon])

    assert inbox.displayed_ids() == [c["id"] for c in (high_soon, high_late, low_soon, low_late, untiered_soon)]
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("5")
    expect(inbox.connection).to_have_text("Live")
    expect(inbox.card(high_soon["id"]).get_by_test_id("tier-badge")).to_have_text("High risk")


def test_card_shows_who_what_and_why(inbox):
    card = approval_card(
        tier="high", tool="ehr.medication_order", op="create", patient_ref="MRN-777", title="Sepsis bay 3",
        client="sepsis-agent", rule_id="tier.high.mutate", explanation="Needs a clinician.",
        args={"drug": "gentamicin", "dose_mg": 350, "renal": {"egfr": 48}},
    )
    inbox.open([card])
    shown = inbox.card(card["id"])

    expect(shown.get_by_test_id("card-tool")).to_have_text("ehr.medication_order")
    expect(shown.get_by_test_id("card-op")).to_have_text("create")
    expect(shown.get_by_test_id("card-patient")).to_have_text("MRN-777")
    expect(shown.get_by_test_id("card-session")).to_have_text("Sepsis bay 3")
    expect(shown.get_by_test_id("card-client")).to_have_text("sepsis-agent")
    expect(shown.get_by_test_id("card-rule")).to_have_text("tier.high.mutate")
    expect(shown.get_by_test_id("card-explanation")).to_have_text("Needs a clinician.")
    expect(shown.get_by_test_id("card-args")).to_contain_text("gentamicin")
    expect(shown.get_by_test_id("card-args")).to_contain_text('"egfr": 48')
    expect(shown.get_by_test_id("countdown")).to_have_text(re.compile(r"^\d+:\d\d left$"))


def test_empty_inbox_says_nothing_is_waiting(inbox):
    inbox.open([])

    expect(inbox.page.get_by_test_id("empty-state")).to_be_visible()
    expect(inbox.page.get_by_test_id("empty-state")).to_contain_text("Nothing waiting for a decision")
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("0")


def test_header_shows_the_reviewer_and_signs_out_with_csrf(inbox):
    inbox.open([])

    expect(inbox.page.get_by_test_id("current-user")).to_have_text("rita")
    inbox.page.get_by_test_id("logout").click()
    inbox.page.wait_for_url("**/accounts/logout/")
    assert inbox.logouts == [f"csrfmiddlewaretoken={CSRF_TOKEN}"]


def test_card_added_appears_without_reload(inbox):
    first = approval_card(tier="low")
    inbox.open([first])
    inbox.page.evaluate("window.__sameDocument = true")

    urgent = approval_card(tier="high", expires_in=120)
    inbox.add(urgent)

    expect(inbox.cards()).to_have_count(2)
    assert inbox.displayed_ids() == [urgent["id"], first["id"]]
    assert inbox.page.evaluate("window.__sameDocument") is True


def test_card_added_twice_is_treated_as_an_update(inbox):
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])

    inbox.add({**card, "args": {"dose_mg": 250}})

    expect(inbox.card(card["id"]).get_by_test_id("card-args")).to_contain_text("250")
    expect(inbox.cards()).to_have_count(1)


def test_card_removed_elsewhere_tells_the_reviewer_working_on_it(inbox):
    selected = approval_card(tier="high")
    other = approval_card(tier="low")
    inbox.open([selected, other])
    inbox.page.keyboard.press("j")
    expect(inbox.card(selected["id"])).to_have_class(re.compile(r"\bis-selected\b"))

    inbox.remove(selected["id"], status="approved", decided_by="alice")

    expect(inbox.card(selected["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Approved by alice")

    inbox.remove(other["id"], status="expired", decided_by=None)
    expect(inbox.cards()).to_have_count(0)
    # Nobody was looking at that one: no extra noise.
    expect(inbox.feedback.get_by_test_id("feedback-message")).to_have_count(1)


def test_card_expiring_under_an_open_reject_says_expired(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.card(card["id"]).get_by_test_id("reject").click()
    inbox.card(card["id"]).get_by_test_id("reject-reason").fill("Wrong patient")

    inbox.remove(card["id"], status="expired", decided_by=None)

    expect(inbox.feedback).to_contain_text("Expired")


# --------------------------------------------------------------------------- decisions


def test_approve_posts_approved_true_with_csrf_header(inbox):
    card = approval_card()
    inbox.open([card])

    inbox.card(card["id"]).get_by_test_id("approve").click()

    decision = inbox.wait_for_decisions(1)[0]
    assert decision.approval_id == card["id"]
    assert decision.body == {"approved": True}
    assert decision.headers["x-csrftoken"] == CSRF_TOKEN
    assert decision.headers["content-type"] == "application/json"
    expect(inbox.card(card["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Approved")


def test_reject_requires_a_reason(inbox):
    card = approval_card()
    inbox.open([card])
    shown = inbox.card(card["id"])

    shown.get_by_test_id("reject").click()
    reason = shown.get_by_test_id("reject-reason")
    submit = shown.get_by_test_id("reject-submit")
    expect(reason).to_be_focused()
    expect(submit).to_be_disabled()
    reason.fill("   ")
    expect(submit).to_be_disabled()
    reason.fill("Dose exceeds renal adjustment for eGFR 48")
    expect(submit).to_be_enabled()
    submit.click()

    assert inbox.wait_for_decisions(1)[0].body == {"approved": False, "reason": "Dose exceeds renal adjustment for eGFR 48"}
    expect(shown).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Rejected")


def test_invalid_json_blocks_approve_edited(inbox):
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])
    shown = inbox.card(card["id"])
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
    inbox.open([card])
    shown = inbox.card(card["id"])
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

    assert inbox.wait_for_decisions(1)[0].body == {"approved": True, "edited_args": edited}
    expect(shown).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Approved with 3 edits")


def test_cancel_edit_restores_the_original_args(inbox):
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])
    shown = inbox.card(card["id"])
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
    inbox.reply_next(card["id"], 409, {"error": "approval_not_pending", "detail": "This approval was already decided."})

    inbox.card(card["id"]).get_by_test_id("approve").click()

    expect(inbox.card(card["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Not applied")
    expect(inbox.feedback).to_contain_text("already decided")


def test_decided_elsewhere_while_approving_says_who_won(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.reply_next(
        card["id"], 409, {"error": "approval_not_pending", "detail": "Not pending."},
        before=lambda: inbox.remove(card["id"], status="rejected", decided_by="bob"),
    )

    inbox.card(card["id"]).get_by_test_id("approve").click()

    expect(inbox.card(card["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Rejected by bob")


def test_network_error_keeps_the_card_and_the_typed_reason(inbox):
    card = approval_card()
    inbox.open([card])
    shown = inbox.card(card["id"])
    inbox.fail_network_next(card["id"])
    shown.get_by_test_id("reject").click()
    shown.get_by_test_id("reject-reason").fill("Allergy documented in GP record")

    shown.get_by_test_id("reject-submit").click()

    expect(shown.get_by_test_id("card-error")).to_contain_text("Network problem")
    expect(shown.get_by_test_id("reject-reason")).to_have_value("Allergy documented in GP record")
    expect(shown.get_by_test_id("reject-submit")).to_be_enabled()

    shown.get_by_test_id("reject-submit").click()  # the retry goes through
    expect(shown).to_have_count(0)
    assert [d.body for d in inbox.decisions] == [{"approved": False, "reason": "Allergy documented in GP record"}] * 2


def test_invalid_payload_keeps_the_card_and_the_edit(inbox):
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])
    shown = inbox.card(card["id"])
    inbox.reply_next(card["id"], 400, {"error": "invalid_payload", "detail": "Integers beyond 2^53-1 are not accepted."})
    shown.get_by_test_id("edit").click()
    shown.get_by_test_id("args-editor").fill('{"dose_mg": 250}')

    shown.get_by_test_id("approve-edited").click()

    expect(shown.get_by_test_id("card-error")).to_contain_text("Integers beyond 2^53-1 are not accepted.")
    expect(shown.get_by_test_id("args-editor")).to_have_value('{"dose_mg": 250}')
    expect(shown.get_by_test_id("approve-edited")).to_be_enabled()


def test_forbidden_keeps_the_card_and_says_not_permitted(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.reply_next(card["id"], 403, {"error": "forbidden", "detail": "Reviewers only."})

    inbox.card(card["id"]).get_by_test_id("approve").click()

    expect(inbox.card(card["id"]).get_by_test_id("card-error")).to_contain_text("Not permitted: Reviewers only.")
    expect(inbox.card(card["id"]).get_by_test_id("approve")).to_be_enabled()


def test_rejected_resume_schema_reports_the_failed_run(inbox):
    card = clarification_card(schema={"type": "object", "properties": {"note": {"type": "string"}}})
    inbox.open([card])
    inbox.reply_next(card["id"], 422, {"error": "resume_schema_rejected", "detail": "note: not allowed here."})
    shown = inbox.card(card["id"])
    shown.locator('[name="note"]').fill("x")

    shown.get_by_test_id("clarify-submit").click()

    expect(shown).to_have_count(0)
    expect(inbox.feedback).to_contain_text("has failed")
    expect(inbox.feedback).to_contain_text("note: not allowed here.")


# --------------------------------------------------------------------------- clarifications


def test_clarification_schema_renders_the_right_controls(inbox):
    card = clarification_card()
    inbox.open([card])
    form = inbox.card(card["id"]).get_by_test_id("clarify-form")

    clinic = form.locator('select[name="clinic"]')
    expect(clinic.locator("option")).to_have_text(["Choose…", "cardiology", "renal", "diabetes"])
    expect(clinic).to_have_attribute("required", "")
    expect(form.locator('input[type="radio"][name="urgency"]')).to_have_count(3)
    expect(form.get_by_label("Within 2 weeks")).to_have_attribute("type", "radio")
    expect(form.get_by_label("Within 2 weeks")).to_have_attribute("value", "soon")  # the option's own value
    expect(clinic.locator("option").nth(2)).to_have_attribute("value", "renal")
    expect(form.locator('input[type="checkbox"][name="tests"]')).to_have_count(3)
    visit = form.locator('input[name="visit_date"]')
    expect(visit).to_have_attribute("type", "date")
    expect(visit).to_have_attribute("min", "2030-01-01")
    expect(visit).to_have_attribute("max", "2030-03-31")
    expect(form.locator('textarea[name="notes"]')).to_be_visible()
    duration = form.locator('input[name="duration_min"]')
    expect(duration).to_have_attribute("type", "number")
    expect(duration).to_have_attribute("min", "10")
    expect(duration).to_have_attribute("max", "60")
    expect(duration).to_have_attribute("step", "1")
    expect(form.locator('input[type="checkbox"][name="interpreter"]')).to_be_visible()
    expect(form.get_by_label("Visit date")).to_be_visible()  # titles label the controls
    expect(inbox.card(card["id"]).get_by_test_id("approve")).to_have_count(0)
    expect(inbox.card(card["id"]).get_by_test_id("card-question")).to_have_text("Which follow-up should be booked?")


def test_clarification_submits_typed_values(inbox):
    card = clarification_card()
    inbox.open([card])
    form = inbox.card(card["id"]).get_by_test_id("clarify-form")

    form.locator('select[name="clinic"]').select_option(label="renal")
    form.get_by_label("Within 2 weeks").check()
    form.get_by_label("ECG").check()
    form.get_by_label("Bloods (U&E)").check()
    form.locator('input[name="visit_date"]').fill("2030-02-14")
    form.locator('textarea[name="notes"]').fill("Needs step-free access")
    form.locator('input[name="duration_min"]').fill("30")
    form.locator('input[name="interpreter"]').check()
    form.get_by_test_id("clarify-submit").click()

    assert inbox.wait_for_decisions(1)[0].body == {
        "values": {
            "clinic": "renal",
            "urgency": "soon",
            "tests": ["ecg", "bloods"],
            "visit_date": "2030-02-14",
            "notes": "Needs step-free access",
            "duration_min": 30,
            "interpreter": True,
        }
    }
    expect(inbox.card(card["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Answer sent")


def test_clarification_is_validated_before_it_is_sent(inbox):
    card = clarification_card()
    inbox.open([card])
    shown = inbox.card(card["id"])
    form = shown.get_by_test_id("clarify-form")

    form.get_by_test_id("clarify-submit").click()
    expect(form.locator('[data-field="clinic"] .field__error')).to_have_text("Choose an option.")
    expect(form.locator('[data-field="urgency"] .field__error')).to_have_text("Choose an option.")
    expect(form.locator('select[name="clinic"]')).to_be_focused()

    form.locator('select[name="clinic"]').select_option(label="renal")
    form.get_by_label("Routine").check()
    form.locator('input[name="visit_date"]').fill("2031-01-01")
    form.locator('input[name="duration_min"]').fill("5")
    form.get_by_test_id("clarify-submit").click()
    expect(form.locator('[data-field="visit_date"] .field__error')).to_have_text("Must be on or before 2030-03-31.")
    expect(form.locator('[data-field="duration_min"] .field__error')).to_have_text("Must be at least 10.")
    expect(form.locator('[name="duration_min"]')).to_have_attribute("aria-invalid", "true")

    inbox.page.wait_for_timeout(100)
    assert inbox.decisions == []


def test_clarification_datetime_bounds_and_malformed_hints(inbox):
    schema = {
        "type": "object",
        "properties": {
            "seen_at": {"type": "string", "format": "date-time", "title": "Seen at",
                        "x-condor-min": "2030-01-01T08:00:00", "x-condor-max": "2030-01-01T18:00:00"},
            "severity": {"type": "string", "enum": "not-a-list", "title": "Severity"},
            "sites": {"type": "array", "title": "Sites", "items": {"type": "string", "enum": ["left", "right"]}},
            "site_count": {"type": "number", "minimum": 0.5, "maximum": 2.5},
            "priority": {"type": "string", "title": "Priority", "enum": ["p1", "p2"], "enumNames": ["P1 — now", "P2 — today"]},
        },
        "required": ["seen_at"],
    }
    card = clarification_card(schema=schema)
    inbox.open([card])
    form = inbox.card(card["id"]).get_by_test_id("clarify-form")

    seen = form.locator('input[name="seen_at"]')
    expect(seen).to_have_attribute("type", "datetime-local")
    expect(seen).to_have_attribute("min", "2030-01-01T08:00")
    expect(seen).to_have_attribute("max", "2030-01-01T18:00")
    expect(form.locator('input[name="severity"]')).to_have_attribute("type", "text")  # degraded, not broken
    expect(form.locator('input[type="checkbox"][name="sites"]')).to_have_count(2)
    expect(form.locator('input[name="site_count"]')).to_have_attribute("step", "any")
    expect(form.locator('select[name="priority"] option')).to_have_text(["— none —", "P1 — now", "P2 — today"])

    seen.fill("2030-01-01T09:30")
    form.locator('input[name="severity"]').fill("moderate")
    form.get_by_label("right").check()
    form.locator('select[name="priority"]').select_option(label="P2 — today")
    form.get_by_test_id("clarify-submit").click()

    values = inbox.wait_for_decisions(1)[0].body["values"]
    assert re.fullmatch(r"2030-01-01T09:30:00[+-]\d\d:\d\d", values.pop("seen_at"))
    assert values == {"severity": "moderate", "sites": ["right"], "priority": "p2"}


def test_form_built_from_the_real_resume_schema_answers_what_it_validates(inbox):
    resume_schemas = pytest.importorskip("approvals.resume_schemas")
    schema = resume_schemas.clarification_resume_schema("Book the follow-up", [
        {"name": "clinic", "hint": {"label": "Clinic", "options": ["cardiology", "renal"]}},
        {"name": "urgency", "hint": {"label": "Urgency", "radio": True, "options": [
            {"value": "routine", "label": "Routine"}, {"value": "soon", "label": "Soon"}]}},
        {"name": "tests", "type": "array", "hint": {"label": "Tests", "min": 1, "options": [
            {"value": "ecg", "label": "ECG"}, {"value": "echo", "label": "Echo"}]}},
        {"name": "visit_date", "type": "date", "hint": {"label": "Visit date", "min": "2030-01-01", "max": "2030-03-31"}},
        {"name": "seen_at", "type": "date-time", "hint": {
            "label": "Seen at", "min": "2030-01-01T08:00:00Z", "max": "2030-01-01T18:00:00Z"}},
        {"name": "notes", "hint": {"label": "Notes", "textarea": True, "required": False}},
        {"name": "duration", "type": "integer", "hint": {"label": "Duration", "min": 10, "max": 60}},
        {"name": "interpreter", "type": "boolean", "hint": {"label": "Interpreter needed", "required": False}},
        {"name": "ward", "hint": {"label": "Ward", "options": "not a list"}},
    ])
    card = clarification_card(schema=schema, message=None)
    inbox.open([card])
    shown = inbox.card(card["id"])
    form = shown.get_by_test_id("clarify-form")

    expect(shown.get_by_test_id("card-question")).to_have_text("Book the follow-up")
    expect(form.locator('input[type="radio"][name="urgency"]')).to_have_count(2)
    expect(form.locator('input[name="seen_at"]')).to_have_attribute("min", "2030-01-01T09:00")  # 08:00Z in Paris
    expect(form.locator('input[name="ward"]')).to_have_attribute("type", "text")
    form.locator('select[name="clinic"]').select_option(label="renal")
    form.get_by_label("Soon").check()
    form.get_by_label("Echo").check()
    form.locator('input[name="visit_date"]').fill("2030-02-01")
    form.locator('input[name="seen_at"]').fill("2030-01-01T10:30")
    form.locator('input[name="duration"]').fill("20")
    form.locator('input[name="ward"]').fill("7B")
    form.get_by_test_id("clarify-submit").click()

    values = inbox.wait_for_decisions(1)[0].body["values"]
    assert values["seen_at"] == "2030-01-01T10:30:00+01:00"
    assert resume_schemas.validate_resume_data(schema, values) == []


def test_declining_a_clarification_needs_a_reason_and_posts_approved_false(inbox):
    card = clarification_card()
    inbox.open([card])
    shown = inbox.card(card["id"])

    shown.get_by_test_id("decline").click()
    reason = shown.get_by_test_id("reject-reason")
    submit = shown.get_by_test_id("reject-submit")
    expect(shown.get_by_test_id("reject-panel")).to_be_visible()
    expect(shown.get_by_test_id("clarify-form")).to_be_hidden()
    expect(reason).to_be_focused()
    expect(submit).to_be_disabled()
    reason.fill("   ")
    expect(submit).to_be_disabled()
    reason.fill("Booking is for the cardiology team to decide")
    expect(submit).to_be_enabled()
    submit.click()

    assert inbox.wait_for_decisions(1)[0].body == {"approved": False, "reason": "Booking is for the cardiology team to decide"}
    expect(shown).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Declined: scheduling.book_followup")


def test_cancelling_a_decline_brings_back_the_answers_typed_so_far(inbox):
    card = clarification_card()
    inbox.open([card])
    shown = inbox.card(card["id"])
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
    inbox.open([card])
    shown = inbox.card(card["id"])
    inbox.reply_next(card["id"], 400, {"error": "invalid_payload", "detail": "A rejection needs a reason."})
    shown.get_by_test_id("decline").click()
    shown.get_by_test_id("reject-reason").fill("Wrong patient on the request")

    shown.get_by_test_id("reject-submit").click()

    expect(shown.get_by_test_id("card-error")).to_contain_text("A rejection needs a reason.")
    expect(shown.get_by_test_id("reject-reason")).to_have_value("Wrong patient on the request")
    expect(shown.get_by_test_id("reject-submit")).to_be_enabled()


# --------------------------------------------------------------------------- keyboard


def test_j_and_k_move_the_selection_and_a_approves(inbox):
    first, second, third = (approval_card(tier="high", expires_in=s) for s in (100, 200, 300))
    inbox.open([first, second, third])
    keyboard = inbox.page.keyboard

    keyboard.press("j")
    expect(inbox.card(first["id"])).to_be_focused()
    keyboard.press("j")
    keyboard.press("j")
    expect(inbox.card(third["id"])).to_have_class(re.compile(r"\bis-selected\b"))
    keyboard.press("k")
    expect(inbox.card(second["id"])).to_be_focused()
    expect(inbox.page.locator(".card.is-selected")).to_have_count(1)

    keyboard.press("a")

    assert inbox.wait_for_decisions(1)[0].approval_id == second["id"]
    expect(inbox.card(second["id"])).to_have_count(0)
    # After a decision nothing is selected (no accidental second approval); j resumes in place.
    expect(inbox.page.locator(".card.is-selected")).to_have_count(0)
    keyboard.press("j")
    expect(inbox.card(third["id"])).to_be_focused()


def test_r_opens_the_reason_and_typing_is_not_a_shortcut(inbox):
    card, other = approval_card(tier="high"), approval_card(tier="low")
    inbox.open([card, other])
    keyboard = inbox.page.keyboard

    keyboard.press("j")
    keyboard.press("r")
    reason = inbox.card(card["id"]).get_by_test_id("reject-reason")
    expect(reason).to_be_focused()
    keyboard.type("jka reason")
    expect(reason).to_have_value("jka reason")
    expect(inbox.card(card["id"])).to_have_class(re.compile(r"\bis-selected\b"))
    assert inbox.decisions == []

    keyboard.press("Escape")
    expect(inbox.card(card["id"]).get_by_test_id("reject-panel")).to_be_hidden()
    expect(inbox.card(card["id"])).to_be_focused()


def test_e_opens_the_editor_and_escape_cancels(inbox):
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])

    inbox.page.keyboard.press("j")
    inbox.page.keyboard.press("e")
    editor = inbox.card(card["id"]).get_by_test_id("args-editor")
    expect(editor).to_be_focused()
    inbox.page.keyboard.press("Escape")

    expect(inbox.card(card["id"]).get_by_test_id("edit-panel")).to_be_hidden()


def test_r_opens_the_decline_panel_on_a_clarification(inbox):
    card = clarification_card()
    inbox.open([card])
    keyboard = inbox.page.keyboard

    keyboard.press("j")
    keyboard.press("r")
    shown = inbox.card(card["id"])
    reason = shown.get_by_test_id("reject-reason")
    expect(reason).to_be_focused()
    keyboard.type("Cannot be answered from the notes")
    keyboard.press("Control+Enter")

    assert inbox.wait_for_decisions(1)[0].body == {"approved": False, "reason": "Cannot be answered from the notes"}
    expect(shown).to_have_count(0)


def test_a_does_not_approve_a_clarification(inbox):
    card = clarification_card()
    inbox.open([card])

    inbox.page.keyboard.press("j")
    inbox.page.keyboard.press("a")

    inbox.page.wait_for_timeout(100)
    assert inbox.decisions == []


# --------------------------------------------------------------------------- safety, time, scale


def test_untrusted_args_are_shown_as_text_never_markup(inbox):
    card = approval_card(
        tool='<img src=x onerror="window.__pwned=1">',
        args={"note": '<img src=x onerror="window.__pwned=1"><b>bold</b>', "nested": {"html": "<script>window.__pwned=1</script>"}},
    )
    inbox.open([card])
    shown = inbox.card(card["id"])

    expect(shown.get_by_test_id("card-args")).to_contain_text("<b>bold</b>")
    assert shown.locator("img, script, b").count() == 0
    assert inbox.page.evaluate("window.__pwned") is None


def test_countdown_turns_urgent_then_expired_disables_actions(inbox):
    inbox.page.clock.install(time=datetime.now())
    card = approval_card(expires_in=90)
    inbox.open([card])
    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("countdown")).to_have_text(re.compile(r"^1:(29|30) left$"))
    expect(shown).not_to_have_class(re.compile(r"\bis-urgent\b"))

    inbox.page.clock.run_for(35_000)
    expect(shown).to_have_class(re.compile(r"\bis-urgent\b"))
    expect(shown.get_by_test_id("countdown")).to_have_text(re.compile(r"^0:5\d left$"))

    inbox.page.clock.run_for(60_000)
    expect(shown.get_by_test_id("countdown")).to_have_text("Expired")
    expect(shown.get_by_test_id("approve")).to_be_disabled()
    expect(shown.get_by_test_id("reject")).to_be_disabled()
    expect(shown.get_by_test_id("edit")).to_be_disabled()


def test_500_cards_render_and_one_removal_touches_only_that_card(inbox):
    cards = [approval_card(tier="high" if i % 7 == 0 else "low", expires_in=300 + i) for i in range(500)]
    inbox.open(cards)
    expect(inbox.cards()).to_have_count(500)
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("500")

    inbox.page.evaluate(
        """() => {
            for (const el of document.querySelectorAll('[data-testid="approval-card"]')) el.__tag = 'original';
            window.__mutations = {added: 0, removed: 0};
            new MutationObserver((records) => {
                for (const r of records) {
                    window.__mutations.added += r.addedNodes.length;
                    window.__mutations.removed += r.removedNodes.length;
                }
            }).observe(document.querySelector('[data-testid="card-list"]'), {childList: true});
        }"""
    )
    gone = cards[250]["id"]
    started = time.monotonic()
    inbox.remove(gone, status="approved", decided_by="alice")
    expect(inbox.card(gone)).to_have_count(0)
    elapsed = time.monotonic() - started

    expect(inbox.cards()).to_have_count(499)
    untouched = inbox.page.evaluate(
        """() => Array.from(document.querySelectorAll('[data-testid="approval-card"]')).every(el => el.__tag === 'original')"""
    )
    assert untouched, "other cards were re-created"
    assert inbox.page.evaluate("window.__mutations") == {"added": 0, "removed": 1}
    assert elapsed < 2.0

    changed = {**cards[10], "explanation": "Updated by the agent"}
    inbox.update(changed)
    expect(inbox.card(changed["id"]).get_by_test_id("card-explanation")).to_have_text("Updated by the agent")
    assert inbox.page.evaluate("window.__mutations") == {"added": 0, "removed": 1}


def test_reconnect_after_the_socket_closes_gets_a_new_snapshot(inbox):
    kept, vanished = approval_card(tier="high"), approval_card(tier="low")
    inbox.open([kept, vanished])

    inbox.drop_connection()
    expect(inbox.connection).to_have_attribute("data-state", "reconnecting")
    expect(inbox.connection).to_have_text("Reconnecting…")
    expect(inbox.page.get_by_test_id("stale-notice")).to_be_visible()
    # While the page is away the server's pending set changes.
    arrived = approval_card(tier="high", expires_in=60)
    inbox.server_cards.pop(vanished["id"])
    inbox.server_cards[arrived["id"]] = arrived

    inbox.wait_for_connections(2)
    expect(inbox.connection).to_have_attribute("data-state", "live")
    expect(inbox.cards()).to_have_count(2)
    assert inbox.displayed_ids() == [arrived["id"], kept["id"]]
    expect(inbox.page.get_by_test_id("stale-notice")).to_be_hidden()


def test_reconnect_keeps_what_the_reviewer_was_typing(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.card(card["id"]).get_by_test_id("reject").click()
    inbox.card(card["id"]).get_by_test_id("reject-reason").fill("Half-written reason")

    inbox.drop_connection()
    inbox.wait_for_connections(2)
    expect(inbox.connection).to_have_attribute("data-state", "live")

    expect(inbox.card(card["id"]).get_by_test_id("reject-reason")).to_have_value("Half-written reason")


# --------------------------------------------------------------------------- login


def test_login_page_shows_errors_and_keeps_next(page):
    from django import forms

    class LoginForm(forms.Form):
        username = forms.CharField()
        password = forms.CharField(widget=forms.PasswordInput)

    form = LoginForm(data={"username": "rita", "password": "wrong"})
    form.is_valid()
    form.add_error(None, "Please enter a correct username and password.")
    html = render_template("registration/login.html", {"form": form, "next": "/inbox/", "user": None})
    page.set_content(html)

    expect(page.get_by_test_id("login-errors")).to_have_text("Please enter a correct username and password.")
    expect(page.get_by_label("Username")).to_have_value("rita")
    expect(page.get_by_label("Password")).to_have_value("")
    expect(page.locator('input[type="hidden"][name="next"]')).to_have_value("/inbox/")
    expect(page.locator('input[name="csrfmiddlewaretoken"]')).to_have_value(CSRF_TOKEN)
