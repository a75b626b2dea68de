"""The Decided view end to end (SPEC section 10): decisions made in the page are listed
there, with who, when, approve or reject, the reason, the edits and the run's state,
and the patient_ref search filters them. Debian's Chromium on a real daphne,
PostgreSQL and Redis, as test_inbox_e2e.py. Keeps a screenshot for the README.
"""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.helpers.approval_loop import PRESCRIPTION, suspend
from tests.helpers.runs import open_executing_run
from tests.live.axe_scan import serious_violations
from tests.live.browser import ARTIFACTS_DIR, CHROMIUM
from tests.live.card_actions import reject
from tests.live.test_inbox_e2e import WARD_SESSION, browser_page, chromium, inbox  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def park(agent, patient_ref: str) -> dict:
    return suspend(agent, open_executing_run(agent, **{**WARD_SESSION, "patient_ref": patient_ref}))


def test_the_decided_view_lists_this_reviewers_decisions_and_searches_them(inbox, live_agent):
    rejected, edited = park(live_agent, "MRN-30001"), park(live_agent, "MRN-47555")

    card = inbox.open_card(rejected["id"])
    reject(card, "Penicillin allergy on file.")
    expect(card).to_have_count(0)
    card = inbox.open_card(edited["id"])
    card.get_by_test_id("edit").click()
    card.get_by_test_id("args-editor").fill(json.dumps({**PRESCRIPTION, "dose": "250 mg"}))
    card.get_by_test_id("approve-edited").click()
    card.get_by_test_id("confirm-approve").click()  # a prescription is high risk: its edit is confirmed too
    expect(card).to_have_count(0)

    inbox.page.get_by_test_id("view-decided").click()
    view = inbox.page.get_by_test_id("decided-view")
    items = view.get_by_test_id("decided-item")
    expect(items).to_have_count(2)
    expect(inbox.page.get_by_test_id("queue")).to_be_hidden()
    newest, older = items.nth(0), items.nth(1)
    expect(newest.get_by_test_id("decided-outcome")).to_have_text("Approved")
    expect(newest.get_by_test_id("decided-action")).to_have_text("New prescription")  # as the Waiting card said it
    expect(newest.get_by_test_id("decided-tool")).to_have_text("prescribe_medication · create")
    expect(newest.get_by_test_id("decided-patient")).to_have_text("MRN-47555")
    expect(newest.get_by_test_id("decided-by")).to_have_text("rita")
    expect(newest.get_by_test_id("decided-edits")).to_contain_text("dose")
    expect(newest.get_by_test_id("decided-edits")).to_contain_text("250 mg")
    expect(newest.get_by_test_id("decided-run")).to_have_text("waiting (suspended)")  # until the agent resumes
    expect(older.get_by_test_id("decided-outcome")).to_have_text("Rejected")
    expect(older.get_by_test_id("decided-reason")).to_have_text("Penicillin allergy on file.")
    assert serious_violations(inbox.page) == []
    inbox.page.locator(".toast__close").evaluate_all("buttons => buttons.forEach((b) => b.click())")
    inbox.page.screenshot(path=str(ARTIFACTS_DIR / "inbox-decided.png"), full_page=True)

    view.get_by_test_id("decided-search").fill("4755")
    expect(items).to_have_count(1)
    expect(items.first).to_have_attribute("data-approval-id", edited["id"])
    expect(view.get_by_test_id("decided-status")).to_contain_text("matching “4755”")
    view.get_by_test_id("decided-search").fill("MRN-99999")
    expect(items).to_have_count(0)
    expect(view.get_by_test_id("decided-status")).to_have_text(
        "No decisions in the last 24 hours for patients matching “MRN-99999”."
    )

    inbox.page.get_by_test_id("view-waiting").click()
    expect(inbox.page.get_by_test_id("decided-view")).to_be_hidden()
    expect(inbox.page.get_by_test_id("empty-state")).to_be_visible()
