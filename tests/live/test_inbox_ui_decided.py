"""The Decided view in real Chromium, its endpoint played by Playwright (inbox/decided/).

What the server says is shown as text (an HTML payload does not run), a four-eyes
decision lists its approvals, a page past the first is asked for by offset, the tabs
follow the ARIA pattern, and the single-key shortcuts rest while the view is shown.
The end-to-end test (a real decision, a real search) is test_inbox_e2e_decided.py.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.live.inbox_fixtures import chromium, inbox, page  # noqa: F401 - pytest fixtures
from tests.live.inbox_rows import approval_card

pytestmark = pytest.mark.browser


def decision(**extra) -> dict:
    return {"id": "a1", "run": "r1", "patient_ref": "MRN-40001", "care_unit": "ICU", "session_title": "Bay 2",
            "tool": "sign_document", "op": "sign", "reason_code": "approval", "status": "approved",
            "args": {"document": "discharge letter"}, "approved_args": None, "edited": False, "resume_data": None,
            "decided_by": "rob", "decided_at": "2030-01-14T09:05:00+00:00", "decision_reason": "",
            "approvals_required": 1, "approvals": [], "run_state": "completed", "run_terminal_reason": "completed",
            **extra}


@pytest.fixture
def decided(inbox):
    """Answers inbox/decided/ with `decided.rows`, a page at a time; records the queries asked."""
    state = {"rows": [], "queries": []}

    def answer(route):
        query = {k: v[0] for k, v in parse_qs(urlsplit(route.request.url).query).items()}
        state["queries"].append(query)
        offset, limit = int(query.get("offset", 0)), int(query.get("limit", 20))
        body = {"count": len(state["rows"]), "next": None, "previous": None,
                "results": state["rows"][offset:offset + limit]}
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    inbox.page.route("**/api/v1/inbox/decided/**", answer)
    return state


def test_what_the_server_sent_is_shown_as_text(inbox, decided):
    payload = "<img src=x onerror=\"window.__ran=1\">"
    decided["rows"] = [decision(status="rejected", decision_reason=payload, patient_ref=payload)]
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    item = inbox.page.get_by_test_id("decided-item")
    expect(item.get_by_test_id("decided-reason")).to_have_text(payload)
    expect(item.get_by_test_id("decided-outcome")).to_have_text("Rejected")
    assert inbox.page.evaluate("window.__ran") is None


def test_a_four_eyes_decision_lists_its_approvals_and_an_answer_shows(inbox, decided):
    decided["rows"] = [
        decision(approvals_required=2, approvals=[{"reviewer": "rita", "at": "2030-01-14T09:01:00+00:00", "reason": ""},
                                                  {"reviewer": "rob", "at": "2030-01-14T09:05:00+00:00", "reason": ""}]),
        decision(id="a2", reason_code="clarification", resume_data={"route": "iv"}, run_state="executing",
                 run_terminal_reason=""),
    ]
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    first, second = inbox.page.get_by_test_id("decided-item").nth(0), inbox.page.get_by_test_id("decided-item").nth(1)
    expect(first).to_contain_text("Approvals (2 of 2): rita at")
    expect(first.get_by_test_id("decided-run")).to_have_text("completed")
    expect(second.get_by_test_id("decided-outcome")).to_have_text("Answered")
    second.get_by_test_id("decided-answer").locator("summary").click()
    expect(second.get_by_test_id("decided-answer")).to_contain_text("iv")
    expect(second.get_by_test_id("decided-run")).to_have_text("still running")


def test_older_decisions_are_a_page_away(inbox, decided):
    decided["rows"] = [decision(id=f"a{n}", patient_ref=f"MRN-{n}") for n in range(25)]
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    expect(inbox.page.get_by_test_id("decided-item")).to_have_count(20)
    inbox.page.get_by_test_id("decided-next").click()
    expect(inbox.page.get_by_test_id("decided-item")).to_have_count(5)
    expect(inbox.page.get_by_test_id("decided-status")).to_contain_text("showing 21–25")
    assert decided["queries"][-1] == {"limit": "20", "offset": "20"}


def test_the_tabs_move_with_the_arrow_keys_and_shortcuts_rest_in_the_decided_view(inbox, decided):
    card = approval_card()
    inbox.open([card])
    waiting = inbox.page.get_by_test_id("view-waiting")
    waiting.focus()
    inbox.page.keyboard.press("ArrowRight")
    expect(inbox.page.get_by_test_id("view-decided")).to_be_focused()
    expect(inbox.page.get_by_test_id("view-decided")).to_have_attribute("aria-selected", "true")
    expect(inbox.page.get_by_test_id("decided-view")).to_be_visible()

    inbox.page.keyboard.press("j")
    inbox.page.keyboard.press("a")
    inbox.page.keyboard.press("ArrowLeft")
    expect(inbox.card(card["id"]).get_by_test_id("approve")).to_be_visible()
    assert inbox.decisions == []
