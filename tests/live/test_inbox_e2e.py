"""The reviewers' inbox end to end: Debian's Chromium on a real daphne, PostgreSQL and Redis.

The agent speaks the REST API over the wire with its key (`live_agent`); the
reviewer signs in through the real login form and works in the real page. Nothing
is mocked: a card reaches the page by the server's Redis push, and the decision the
page posts is what the agent's resume is checked against. A failing test keeps a
screenshot in test-artifacts/ (the `page` fixture of inbox_fixtures.py).

Run: DATABASE_URL=postgres://… REDIS_URL=redis://… .venv/bin/pytest tests/live/test_inbox_e2e.py -q
"""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from runs.models import Run
from tests.helpers.approval_loop import PRESCRIPTION, approve, asked_run, resume, suspend
from tests.helpers.runs import append, open_executing_run
from tests.live.browser import CHROMIUM
from tests.live.card_actions import reject
from tests.live.e2e_fixtures import browser_page, chromium  # noqa: F401 - a browser per test, the live page
from tests.live.e2e_helpers import INBOX_PATH

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    # The server is another process: it sees committed rows only.
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

PATIENT_REF = "MRN-20417"
WARD_SESSION = {
    "title": "Sepsis pathway, bay 3",
    "patient_ref": PATIENT_REF,
    "autonomy": "autonomous",
    "age_band": "adult",
}
EDITED = {**PRESCRIPTION, "dose": "250 mg"}
CLARIFICATION = [
    {
        "name": "route",
        "hint": {
            "label": "Route",
            "radio": True,
            "options": [
                {"value": "oral", "label": "By mouth"},
                {"value": "iv", "label": "Intravenous"},
                {"value": "im", "label": "Intramuscular"},
            ],
        },
    },
    {
        "name": "monitoring",
        "hint": {
            "label": "Monitoring",
            "multiple": True,
            "options": [
                {"value": "renal", "label": "Renal function"},
                {"value": "levels", "label": "Drug levels"},
                {"value": "ecg", "label": "ECG"},
            ],
        },
    },
    {"name": "start_date", "type": "date", "hint": {"label": "Start date", "min": "2030-01-01", "max": "2030-03-31"}},
    {"name": "notes", "hint": {"label": "Notes for the ward", "textarea": True}},
    {"name": "days", "type": "integer", "hint": {"label": "Course length (days)", "min": 1, "max": 14}},
]


@pytest.fixture
def inbox(browser_page, rita):
    """Rita signed in through the login form, her inbox live and tagged against reloads."""
    browser_page.sign_in("rita")
    browser_page.wait_live()
    browser_page.mark_document()
    return browser_page


def park_prescription(agent) -> tuple[str, dict]:
    """(run id, approval): the agent's prescription, parked for a clinician."""
    run_id = open_executing_run(agent, **WARD_SESSION)
    return run_id, suspend(agent, run_id)  # asserts the 202


@pytest.fixture
def parked(inbox, live_agent):
    # After `inbox`: the card must reach an open page by the push, not in its first snapshot.
    return park_prescription(live_agent)


@pytest.fixture
def asked(inbox, live_agent):
    """(run id, approval) of a run whose agent asked how the gentamicin should be given (after `inbox`, as `parked`)."""
    return asked_run(live_agent, CLARIFICATION, session=WARD_SESSION, message="How should the gentamicin be given?")


def test_a_reviewer_signs_in_and_lands_on_the_live_inbox(browser_page, rita):
    landed = browser_page.sign_in("rita")

    assert landed.status == 200
    assert browser_page.path == INBOX_PATH  # LOGIN_REDIRECT_URL
    browser_page.wait_live()
    expect(browser_page.page.get_by_test_id("current-user")).to_have_text("rita")


def test_a_suspend_made_through_the_api_appears_without_reload(inbox, live_agent):
    expect(inbox.page.get_by_test_id("empty-state")).to_be_visible()

    _, approval = park_prescription(live_agent)

    card = inbox.open_card(approval["id"])
    expect(card.get_by_test_id("card-tool")).to_have_text("prescribe_medication")
    expect(card.get_by_test_id("card-patient")).to_have_text(PATIENT_REF)
    expect(card.get_by_test_id("tier-badge")).to_have_text("High risk")
    # Pushed on the socket the page already had, not a reload's or a reconnect's snapshot.
    assert inbox.same_document()
    assert len(inbox.sockets) == 1


def test_the_card_says_why_the_agent_asked_and_in_what_session(inbox, live_agent):
    run_id = open_executing_run(live_agent, **WARD_SESSION, consent=True)
    session_id = Run.objects.get(pk=run_id).session_id
    append(live_agent, session_id, "user", [{"type": "text", "text": "Start the sepsis protocol for bay 3."}])
    append(
        live_agent, session_id, "assistant", [{"type": "text", "text": "The culture is back; prescribing."}], run=run_id
    )
    rationale = "Culture grew E. coli; <script>window.__x=1</script> start the protocol."
    approval = suspend(live_agent, run_id, metadata={"rationale": rationale})

    card = inbox.open_card(approval["id"])
    expect(card.get_by_test_id("card-action")).to_have_text("New prescription")
    expect(card.get_by_test_id("card-rationale")).to_have_text(rationale)  # text, never markup
    card.get_by_text("Conversation before this request").click()
    expect(card.get_by_test_id("turn-user-text")).to_have_text("Start the sepsis protocol for bay 3.")
    expect(card.get_by_test_id("turn-agent-text")).to_have_text("The culture is back; prescribing.")
    expect(card.get_by_test_id("fact-age")).to_have_text("Age: Adult")
    expect(card.get_by_test_id("fact-consent")).to_have_text("Consent: Recorded")
    expect(card.get_by_test_id("fact-autonomy")).to_have_text("Autonomy: Autonomous (clinician typed it)")
    assert inbox.page.evaluate("window.__x") is None


def test_the_agent_resumes_with_the_args_the_reviewer_edited(inbox, parked, live_agent):
    run_id, approval = parked
    card = inbox.open_card(approval["id"])
    card.get_by_test_id("edit").click()
    card.get_by_test_id("args-editor").fill(json.dumps(EDITED, indent=2))
    card.get_by_test_id("approve-edited").click()
    card.get_by_test_id("confirm-approve").click()  # a prescription is high risk: its edit is confirmed too

    expect(card).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Approved with 1 edit")
    original = resume(live_agent, run_id, approval["id"], PRESCRIPTION)
    assert (original.status_code, original.json()["error"]) == (409, "payload_mismatch")
    edited = resume(live_agent, run_id, approval["id"], EDITED)
    assert edited.status_code == 200, edited.content
    assert edited.json()["args"] == EDITED


def test_a_clarification_answered_in_the_form_is_what_the_agent_resumes_with(inbox, asked, live_agent):
    run_id, approval = asked
    card = inbox.open_card(approval["id"])
    form = card.get_by_test_id("clarify-form")

    expect(card.get_by_test_id("card-question")).to_have_text("How should the gentamicin be given?")
    form.get_by_label("Intravenous", exact=True).check()
    form.get_by_label("Renal function", exact=True).check()
    form.get_by_label("Drug levels", exact=True).check()
    form.locator('[name="start_date"]').fill("2030-02-14")
    form.locator('[name="notes"]').fill("Trough level before the third dose.")
    form.locator('[name="days"]').fill("5")
    form.get_by_test_id("clarify-submit").click()

    expect(card).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Answer sent")
    resumed = resume(live_agent, run_id, approval["id"], PRESCRIPTION)
    assert resumed.status_code == 200, resumed.content
    assert resumed.json()["values"] == {
        "route": "iv",
        "monitoring": ["renal", "levels"],
        "start_date": "2030-02-14",
        "notes": "Trough level before the third dose.",
        "days": 5,
    }


def test_a_clarification_declined_in_the_browser_denies_that_question(inbox, asked, live_agent):
    run_id, approval = asked
    card = inbox.open_card(approval["id"])
    reject(card, "Route is for the prescriber, not the ward.", opener="decline")

    expect(card).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Declined")
    run = live_agent.get(f"/api/v1/runs/{run_id}/").json()
    assert (run["state"], run["terminal_reason"]) == ("executing", None)
    refused = resume(live_agent, run_id, approval["id"], PRESCRIPTION)
    assert (refused.status_code, refused.json()["error"]) == (409, "approval_rejected")
    assert "Route is for the prescriber" in refused.json()["detail"]


def test_a_rejection_in_the_browser_denies_the_call_and_the_run_goes_on(inbox, parked, live_agent):
    run_id, approval = parked
    card = inbox.open_card(approval["id"])
    reject(card, "Penicillin allergy on file.")

    expect(card).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Rejected")
    run = live_agent.get(f"/api/v1/runs/{run_id}/").json()
    assert (run["state"], run["terminal_reason"]) == ("executing", None)


def test_reject_and_stop_in_the_browser_names_and_withdraws_the_runs_other_cards(inbox, live_agent):
    run_id, first = park_prescription(live_agent)
    second = suspend(
        live_agent, run_id, tool="sign_document", op="sign", args={"document_id": "d-7"}, tool_call_id="call-2"
    )
    card = inbox.open_card(first["id"])
    expect(inbox.card(second["id"])).to_have_attribute("data-run-pos", "last")
    card.get_by_test_id("reject").click()
    expect(card.get_by_test_id("reject-stop-warning")).to_contain_text("sign_document · sign (waiting for a decision)")
    card.get_by_test_id("reject-reason").fill("Wrong patient.")
    card.get_by_test_id("reject-stop-submit").click()

    expect(inbox.card(first["id"])).to_have_count(0)
    expect(inbox.card(second["id"])).to_have_count(0)
    run = live_agent.get(f"/api/v1/runs/{run_id}/").json()
    assert (run["state"], run["terminal_reason"]) == ("aborted", "approval_denied")
    assert live_agent.get(f"/api/v1/approvals/{second['id']}/").json()["status"] == "withdrawn"


def test_a_new_run_withdraws_the_card_under_the_reviewer_and_keeps_her_reason(inbox, parked, live_agent):
    run_id, approval = parked
    card = inbox.open_card(approval["id"])
    card.get_by_test_id("reject").click()
    card.get_by_test_id("reject-reason").fill("Penicillin allergy on file.")

    # The agent starts over while she types: its new run supersedes the one her card belongs to.
    session_id = live_agent.get(f"/api/v1/runs/{run_id}/").json()["session"]
    opened = live_agent.post(f"/api/v1/sessions/{session_id}/runs/", {}, format="json")
    assert (opened.status_code, opened.json()["superseded_run"]) == (201, run_id)

    expect(card.get_by_test_id("card-withdrawn")).to_contain_text("Withdrawn: the agent started a new run")
    expect(card.get_by_test_id("reject-reason")).to_have_value("Penicillin allergy on file.")
    expect(card.get_by_test_id("reject-submit")).to_be_disabled()
    assert live_agent.get(f"/api/v1/approvals/{approval['id']}/").json()["status"] == "withdrawn"
    assert inbox.same_document()


def test_stop_run_in_the_browser_aborts_the_run(inbox, parked, live_agent):
    run_id, approval = parked
    card = inbox.open_card(approval["id"])
    card.get_by_test_id("stop-run").click()
    card.get_by_test_id("stop-reason").fill("Patient discharged.")
    card.get_by_test_id("stop-submit").click()

    expect(card).to_have_count(0)
    run = live_agent.get(f"/api/v1/runs/{run_id}/").json()
    assert (run["state"], run["terminal_reason"]) == ("aborted", "user_stopped")


def test_a_card_decided_elsewhere_leaves_the_open_page(inbox, parked, live_reviewer):
    _, approval = parked
    card = inbox.open_card(approval["id"])
    card.get_by_test_id("reject").click()  # Rita is working on it here…
    card.get_by_test_id("reject-reason").fill("Checking the allergy")

    approve(live_reviewer, approval["id"])  # …and approves it from another device

    expect(card).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Approved by rita")
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("0")
    assert inbox.same_document()


def test_a_compliance_officer_is_refused_the_inbox(browser_page, carl):
    landed = browser_page.sign_in("carl")

    assert browser_page.path == INBOX_PATH
    assert landed.status == 403
    assert browser_page.sockets == []
