"""The approval is bound to its patient (SPEC section 4), in real Chromium, decision API mocked.

An edited approval of a high-risk card asks the same "Yes, approve" as a plain one, showing the edit
(old → new) and the patient; the arguments that name the patient are read-only; the toast names the
patient the card is bound to.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.live.axe_scan import serious_violations
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser

CHEMO = {"patient_ref": "MRN-S005", "drug": "methotrexate", "dose_mg": 1000}


def editing(inbox, card):
    """The card, open in the inbox with its edit panel showing the JSON editor."""
    inbox.open([card])
    shown = inbox.card(card["id"])
    shown.get_by_test_id("edit").click()
    return shown


def test_an_edited_approval_of_a_high_risk_card_asks_first_with_the_diff_and_the_patient(inbox):
    card = approval_card(tier="high", args=CHEMO, patient_ref="MRN-S005")
    shown = editing(inbox, card)
    shown.get_by_test_id("args-editor").fill(json.dumps({**CHEMO, "dose_mg": 10000}))

    shown.get_by_test_id("approve-edited").click()

    panel = shown.get_by_test_id("confirm-panel")
    expect(panel).to_be_visible()
    expect(panel.get_by_test_id("confirm-text")).to_contain_text("with 1 edit")
    expect(panel.get_by_test_id("confirm-patient")).to_have_text("Patient: MRN-S005")
    change = panel.get_by_test_id("confirm-diff").locator('[data-path="dose_mg"]')
    expect(change.locator(".diff__before")).to_have_text("1000")
    expect(change.locator(".diff__after")).to_have_text("10000")
    expect(panel.get_by_test_id("confirm-cancel")).to_be_focused()
    inbox.round_trip()
    assert inbox.decisions == []  # not in one click

    panel.get_by_test_id("confirm-approve").click()

    assert inbox.wait_for_decisions(1)[0].body == {
        "approved": True,
        "edited_args": {**CHEMO, "dose_mg": 10000},
        "payload_hash": card["payload_hash"],
    }
    expect(inbox.feedback).to_contain_text("MRN-S005")


def test_cancelling_the_confirmation_goes_back_to_the_edit_as_it_was(inbox):
    card = approval_card(tier="high", args=CHEMO, patient_ref="MRN-S005")
    shown = editing(inbox, card)
    edited = json.dumps({**CHEMO, "dose_mg": 500})
    shown.get_by_test_id("args-editor").fill(edited)
    shown.get_by_test_id("approve-edited").click()

    shown.get_by_test_id("confirm-cancel").click()

    expect(shown.get_by_test_id("confirm-panel")).to_be_hidden()
    expect(shown.get_by_test_id("args-editor")).to_have_value(edited)
    expect(shown.get_by_test_id("args-editor")).to_be_focused()
    assert inbox.decisions == []


def test_ctrl_enter_in_the_editor_of_a_high_risk_card_asks_first_too(inbox):
    card = approval_card(tier="high", args=CHEMO, patient_ref="MRN-S005")
    shown = editing(inbox, card)
    editor = shown.get_by_test_id("args-editor")
    editor.fill(json.dumps({**CHEMO, "dose_mg": 500}))

    editor.press("Control+Enter")

    expect(shown.get_by_test_id("confirm-panel")).to_be_visible()
    inbox.round_trip()
    assert inbox.decisions == []


def test_the_arguments_that_name_the_patient_are_read_only_field_by_field(inbox):
    card = approval_card(args=CHEMO, patient_ref="MRN-S005")
    shown = editing(inbox, card)
    expect(shown.get_by_test_id("edit-locked")).to_have_text("Not editable, they name the patient: patient_ref.")
    shown.get_by_test_id("edit-as").click()
    form = shown.get_by_test_id("args-form")

    expect(form.locator('[name="patient_ref"]')).to_have_attribute("readonly", "")
    expect(form.locator('[name="patient_ref"]')).to_have_value("MRN-S005")
    expect(form.locator('[name="drug"]')).to_be_focused()  # the first field that may change
    form.locator('[name="dose_mg"]').fill("500")
    shown.get_by_test_id("approve-edited").click()

    assert inbox.wait_for_decisions(1)[0].body["edited_args"] == {**CHEMO, "dose_mg": 500}


def test_a_json_edit_of_an_argument_that_names_the_patient_is_held_back(inbox):
    card = approval_card(args={**CHEMO, "order": {"mrn": "MRN-S005"}}, patient_ref="MRN-S005")
    shown = editing(inbox, card)

    shown.get_by_test_id("args-editor").fill(json.dumps({**CHEMO, "order": {"mrn": "MRN-S006"}}))

    expect(shown.get_by_test_id("args-editor-error")).to_contain_text("“order.mrn” names the patient")
    expect(shown.get_by_test_id("approve-edited")).to_be_disabled()
    assert inbox.decisions == []


def test_the_card_shows_the_patient_context_it_is_bound_to(inbox):
    card = approval_card(patient_ref="MRN-S005", age_band="teen", consent=False)
    inbox.open([card])
    shown = inbox.card(card["id"])
    expect(shown.get_by_test_id("card-patient")).to_have_text("MRN-S005")
    expect(shown.get_by_test_id("fact-age")).to_contain_text("Teen")
    expect(shown.get_by_test_id("fact-consent")).to_contain_text("Not recorded")


def test_the_edited_confirmation_and_the_locked_fields_have_no_serious_violations(inbox):
    card = approval_card(tier="high", args=CHEMO, patient_ref="MRN-S005")
    shown = editing(inbox, card)
    shown.get_by_test_id("edit-as").click()
    assert serious_violations(inbox.page) == []
    shown.get_by_test_id("args-form").locator('[name="dose_mg"]').fill("500")
    shown.get_by_test_id("approve-edited").click()
    expect(shown.get_by_test_id("confirm-panel")).to_be_visible()
    violations = serious_violations(inbox.page)
    assert violations == [], json.dumps(violations, indent=1)
