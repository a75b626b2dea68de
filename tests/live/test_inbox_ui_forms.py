"""Clarification forms in real Chromium, decision API mocked: the controls a resume schema makes, and the values sent.

The page is the production template and tests/live/inbox_harness.py plays the server.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from approvals.resume_validation import validate_resume_data
from tests.live.inbox_rows import clarification_card

pytestmark = pytest.mark.browser


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

    inbox.round_trip()
    assert inbox.decisions == []


def test_clarification_datetime_bounds_and_malformed_hints(inbox):
    optional = {"required": False}
    card = clarification_card(
        missing=[
            {
                "name": "seen_at",
                "type": "date-time",
                "hint": {"label": "Seen at", "min": "2030-01-01T08:00:00+01:00", "max": "2030-01-01T18:00:00+01:00"},
            },
            {"name": "severity", "hint": {"label": "Severity", "options": "not-a-list", **optional}},
            {"name": "sites", "type": "array", "hint": {"label": "Sites", "options": ["left", "right"], **optional}},
            {"name": "site_count", "type": "number", "hint": {"min": 0.5, "max": 2.5, **optional}},
            {
                "name": "priority",
                "hint": {
                    "label": "Priority",
                    "options": [{"value": "p1", "label": "P1 — now"}, {"value": "p2", "label": "P2 — today"}],
                    **optional,
                },
            },
        ]
    )
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
    card = clarification_card(
        message="Book the follow-up",
        missing=[
            {"name": "clinic", "hint": {"label": "Clinic", "options": ["cardiology", "renal"]}},
            {
                "name": "urgency",
                "hint": {
                    "label": "Urgency",
                    "radio": True,
                    "options": [{"value": "routine", "label": "Routine"}, {"value": "soon", "label": "Soon"}],
                },
            },
            {
                "name": "tests",
                "type": "array",
                "hint": {
                    "label": "Tests",
                    "min": 1,
                    "options": [{"value": "ecg", "label": "ECG"}, {"value": "echo", "label": "Echo"}],
                },
            },
            {
                "name": "visit_date",
                "type": "date",
                "hint": {"label": "Visit date", "min": "2030-01-01", "max": "2030-03-31"},
            },
            {
                "name": "seen_at",
                "type": "date-time",
                "hint": {"label": "Seen at", "min": "2030-01-01T08:00:00Z", "max": "2030-01-01T18:00:00Z"},
            },
            {"name": "notes", "hint": {"label": "Notes", "textarea": True, "required": False}},
            {"name": "duration", "type": "integer", "hint": {"label": "Duration", "min": 10, "max": 60}},
            {"name": "interpreter", "type": "boolean", "hint": {"label": "Interpreter needed", "required": False}},
            {"name": "ward", "hint": {"label": "Ward", "options": "not a list"}},
        ],
    )
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
    assert validate_resume_data(card["resume_schema"], values) == []
