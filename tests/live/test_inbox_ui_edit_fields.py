"""Editing flat args field by field (issue 14) in real Chromium, decision API mocked.

Flat args (plain values only) can be edited one typed field per argument: a number
field for a number, a checkbox for a boolean, a text field for a string; edits carry
across to the JSON editor and back. Nested args, and args with hidden characters,
keep the JSON editor only. (On a phone the fields open first:
test_inbox_e2e_phone_edit.py.)
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser

FLAT = {"drug": "gentamicin", "dose_mg_per_kg": 5, "once_daily": True, "note": None}


def open_fields(inbox, args):
    card = approval_card(args=args)
    inbox.open([card])
    shown = inbox.card(card["id"])
    shown.get_by_test_id("edit").click()
    expect(shown.get_by_test_id("args-editor")).to_be_focused()  # JSON first on a desktop
    shown.get_by_test_id("edit-as").click()
    return card, shown


def test_each_flat_argument_gets_a_field_of_its_type(inbox):
    card, shown = open_fields(inbox, FLAT)
    form = shown.get_by_test_id("args-form")
    expect(form.locator('[name="drug"]')).to_have_value("gentamicin")
    expect(form.locator('[name="dose_mg_per_kg"]')).to_have_attribute("type", "number")
    expect(form.locator('[name="once_daily"]')).to_have_attribute("type", "checkbox")
    expect(form.locator('[name="once_daily"]')).to_be_checked()
    expect(form.locator('[name="note"]')).to_have_value("")
    expect(shown.get_by_test_id("args-editor")).to_be_hidden()

    form.locator('[name="dose_mg_per_kg"]').fill("4.5")
    form.locator('[name="once_daily"]').uncheck()
    form.locator('[name="note"]').fill("renal dosing")
    shown.get_by_test_id("approve-edited").click()

    edited = {"drug": "gentamicin", "dose_mg_per_kg": 4.5, "once_daily": False, "note": "renal dosing"}
    assert inbox.wait_for_decisions(1)[0].body == {
        "approved": True,
        "edited_args": edited,
        "payload_hash": card["payload_hash"],
    }


def test_an_empty_number_blocks_approving(inbox):
    _, shown = open_fields(inbox, FLAT)
    shown.get_by_test_id("args-form").locator('[name="dose_mg_per_kg"]').fill("")
    expect(shown.get_by_test_id("args-editor-error")).to_have_text("Check the highlighted fields.")
    expect(shown.get_by_test_id("approve-edited")).to_be_disabled()


def test_edits_carry_across_to_json_and_back(inbox):
    _, shown = open_fields(inbox, FLAT)
    shown.get_by_test_id("args-form").locator('[name="drug"]').fill("tobramycin")
    shown.get_by_test_id("edit-as").click()
    expect(shown.get_by_test_id("args-editor")).to_have_value(re.compile(r'"drug": "tobramycin"'))
    shown.get_by_test_id("args-editor").fill(
        '{"drug": "tobramycin", "dose_mg_per_kg": 3, "once_daily": true, "note": null}'
    )
    shown.get_by_test_id("edit-as").click()
    expect(shown.get_by_test_id("args-form").locator('[name="dose_mg_per_kg"]')).to_have_value("3")
    expect(shown.get_by_test_id("args-diff")).to_contain_text("2 changes")


@pytest.mark.parametrize(
    "args",
    [
        {"drug": "gentamicin", "schedule": {"every_hours": 24}},
        {"drug": "genta\u200bmicin"},
    ],
    ids=["nested", "hidden-character"],
)
def test_args_a_form_would_misshow_keep_the_json_editor(inbox, args):
    card = approval_card(args=args)
    inbox.open([card])
    shown = inbox.card(card["id"])
    shown.get_by_test_id("edit").click()
    expect(shown.get_by_test_id("args-editor")).to_be_visible()
    expect(shown.get_by_test_id("edit-as")).to_be_hidden()


def test_the_fields_open_first_on_a_phone(page):
    page.set_viewport_size({"width": 390, "height": 844})
    harness = InboxHarness(page)
    card = approval_card(args=FLAT)
    harness.open([card])
    harness.card(card["id"]).get_by_test_id("edit").click()
    expect(harness.card(card["id"]).get_by_test_id("args-form")).to_be_visible()
    expect(harness.card(card["id"]).locator('[name="drug"]')).to_be_focused()
