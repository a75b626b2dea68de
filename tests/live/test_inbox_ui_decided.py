"""The Decided view in real Chromium, its endpoint (inbox/decided/) played by Playwright with the
server's own serializer over rows the harness decided.

What the server says is shown as text (an HTML payload does not run), a four-eyes
decision lists its approvals, a page past the first is asked for by offset, the tabs
follow the ARIA pattern, and the single-key shortcuts rest while the view is shown.
The end-to-end test (a real decision, a real search) is test_inbox_e2e_decided.py.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone
from playwright.sync_api import expect
from rest_framework.renderers import JSONRenderer

from approvals.models import ApprovalStatus
from inbox.decided import DecidedSerializer
from runs.models import Run
from runs.states import RunState, TerminalReason
from tests.live.bidi import HEBREW_DOSE, TATWEEL_DOSE, assert_drawn_in_sent_order
from tests.live.inbox_rows import Rows, approval_card, clarification_card

pytestmark = pytest.mark.browser


def decided(
    *,
    status: str = ApprovalStatus.APPROVED,
    by=("rob",),
    reason: str = "",
    values=None,
    run_state: str = RunState.COMPLETED,
    terminal_reason: str = TerminalReason.COMPLETED,
    card=None,
    then: str | None = None,
    result: str | None = None,
    **card_fields,
) -> dict:
    """A decision as inbox/decided/ sends it: DecidedSerializer over a row the harness decided
    as approvals/decisions.py would (each reviewer in `by` in turn), its run now in `run_state`;
    `then`: what became of it afterwards (withdrawn with its run, consumed by the agent);
    `result`: the call's result the agent reported ("ok" or "error"), as the view reads it from the ledger."""
    card = card or approval_card(**card_fields)
    rows = Rows()
    rows.keep(card.row, card.context)
    for reviewer in by:
        rows.decide(card["id"], status, reviewer, reason=reason, values=values)
    if then is not None:
        rows.decide(card["id"], then, None)
    card.row.run = Run(pk=card.row.run_id, session=card.row.session, state=run_state, terminal_reason=terminal_reason)
    card.row.call_reported_at = timezone.now() if result else None  # DecidedCards' annotations of the ledger row
    card.row.call_is_error = result == "error" if result else None
    return json.loads(JSONRenderer().render(DecidedSerializer(card.row).data))


@pytest.fixture
def decided_view(inbox):
    """Answers inbox/decided/ with `decided.rows`, a page at a time; records the queries asked."""
    state = {"rows": [], "queries": []}

    def answer(route):
        query = {k: v[0] for k, v in parse_qs(urlsplit(route.request.url).query).items()}
        state["queries"].append(query)
        offset, limit = int(query.get("offset", 0)), int(query.get("limit", 20))
        body = {
            "count": len(state["rows"]),
            "next": None,
            "previous": None,
            "results": state["rows"][offset : offset + limit],
        }
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    inbox.page.route("**/api/v1/inbox/decided/**", answer)
    return state


def test_what_the_server_sent_is_shown_as_text(inbox, decided_view):
    payload = '<img src=x onerror="window.__ran=1">'
    decided_view["rows"] = [decided(status=ApprovalStatus.REJECTED, reason=payload, patient_ref=payload)]
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    item = inbox.page.get_by_test_id("decided-item")
    expect(item.get_by_test_id("decided-reason")).to_have_text(payload)
    expect(item.get_by_test_id("decided-outcome")).to_have_text("Rejected")
    assert inbox.page.evaluate("window.__ran") is None


@pytest.mark.parametrize("dose", [TATWEEL_DOSE, HEBREW_DOSE], ids=["tatweel", "hebrew"])
def test_right_to_left_letters_cannot_reorder_the_digits_of_a_decided_value(inbox, decided_view, dose):
    decided_view["rows"] = [
        decided(
            status=ApprovalStatus.REJECTED,
            reason=f"Not {dose} without a level",
            args={"drug": "methotrexate", "dose_mg_per_week": dose},
        )
    ]
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    item = inbox.page.get_by_test_id("decided-item")
    item.get_by_test_id("decided-args").locator("summary").click()  # a closed fold draws nothing to measure
    value = item.get_by_test_id("decided-args").locator('.args__row[data-key="dose_mg_per_week"] dd')
    assert_drawn_in_sent_order(value, "2525")
    expect(value.get_by_test_id("rtl-char").first).to_be_visible()
    reason = item.get_by_test_id("decided-reason")
    assert_drawn_in_sent_order(reason, "2525")
    expect(reason.get_by_test_id("rtl-char").first).to_be_visible()


def test_a_four_eyes_decision_lists_its_approvals_and_an_answer_shows(inbox, decided_view):
    decided_view["rows"] = [
        decided(tool="sign_document", op="sign", tier="high", args={"document_id": "d-7"}, by=("rita", "rob")),
        decided(card=clarification_card(), values={"route": "iv"}, run_state=RunState.EXECUTING, terminal_reason=""),
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


def test_a_grant_withdrawn_with_its_run_says_so(inbox, decided_view):
    decided_view["rows"] = [
        decided(then=ApprovalStatus.WITHDRAWN, run_state=RunState.ABORTED, terminal_reason=TerminalReason.USER_STOPPED)
    ]
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    expect(inbox.page.get_by_test_id("decided-outcome")).to_have_text("Approved, then withdrawn")


# The browser's zone is Europe/Paris (tests/live/inbox_fixtures.py). A page clock pinned
# late on the day the clocks go forward: its yesterday is 23 hours long.
PAGE_NOW = "2026-03-29T21:30:00Z"  # 23:30 in Paris, summer time since 02:00


def test_decided_says_what_became_of_each_approved_call(inbox, decided_view):
    rows = [
        decided(then=ApprovalStatus.CONSUMED, result="ok", patient_ref="MRN-RAN"),
        decided(then=ApprovalStatus.CONSUMED, result="error", patient_ref="MRN-FAILED"),
        decided(
            then=ApprovalStatus.CONSUMED, patient_ref="MRN-RUNNING", run_state=RunState.EXECUTING, terminal_reason=""
        ),
        decided(patient_ref="MRN-WAITING", run_state=RunState.SUSPENDED, terminal_reason=""),
        decided(
            then=ApprovalStatus.WITHDRAWN,
            patient_ref="MRN-WITHDRAWN",
            run_state=RunState.ABORTED,
            terminal_reason=TerminalReason.USER_STOPPED,
        ),
        decided(status=ApprovalStatus.REJECTED, patient_ref="MRN-REJECTED"),
    ]
    # When each happened, all earlier today; the waiting one's is its deadline, later today.
    times = ["2026-03-29T21:05:00Z", "2026-03-29T21:06:00Z", "2026-03-29T21:07:00Z", "2026-03-29T21:20:00Z"]
    for row, at in zip(rows[:4], times, strict=True):
        row["call_outcome_at"] = at
    decided_view["rows"] = rows
    inbox.page.clock.set_fixed_time(PAGE_NOW)
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    items = inbox.page.get_by_test_id("decided-item")
    said = {
        0: "Ran · the agent reported its result at 23:05",
        1: "Failed · the agent reported an error at 23:06",
        2: "Running · the agent took the approval at 23:07; no result yet",
        3: "Waiting · the agent has not used the approval yet (it lasts until 23:20)",
        4: "Withdrawn · the run ended before the agent used the approval",
    }
    for at, text in said.items():
        expect(items.nth(at).get_by_test_id("decided-call")).to_have_text(text)
    expect(items.nth(0)).to_contain_text("What became of the call: Ran")
    expect(items.nth(5).get_by_test_id("decided-call")).to_have_count(0)


def test_a_time_on_another_day_names_its_day(inbox, decided_view):
    """A deadline past midnight is tomorrow's, never yesterday's; the days either side are
    counted in the reviewer's calendar across the clock change; further days are dated."""
    waiting = decided(patient_ref="MRN-WAITING", run_state=RunState.SUSPENDED, terminal_reason="")
    waiting["call_outcome_at"] = "2026-03-29T22:15:00Z"  # 00:15 on Monday in Paris
    ran = decided(then=ApprovalStatus.CONSUMED, result="ok", patient_ref="MRN-RAN")
    ran["call_outcome_at"] = "2026-03-28T22:05:00Z"  # 23:05 on Saturday, winter time
    expired = decided(then=ApprovalStatus.EXPIRED, patient_ref="MRN-EXPIRED")
    expired["call_outcome_at"] = expired["decided_at"] = "2026-03-20T09:00:00Z"  # 10:00 a week before
    decided_view["rows"] = [waiting, ran, expired]
    inbox.page.clock.set_fixed_time(PAGE_NOW)
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    items = inbox.page.get_by_test_id("decided-item")
    expect(items.nth(0).get_by_test_id("decided-call")).to_have_text(
        "Waiting · the agent has not used the approval yet (it lasts until tomorrow 00:15)"
    )
    expect(items.nth(1).get_by_test_id("decided-call")).to_have_text(
        "Ran · the agent reported its result yesterday at 23:05"
    )
    expect(items.nth(2).get_by_test_id("decided-call")).to_have_text(
        "Expired · the approval ran out unused on Fri 20 Mar at 10:00"
    )
    expect(items.nth(2)).to_contain_text("Decided by: rob on Fri 20 Mar at 10:00")


def test_older_decisions_are_a_page_away(inbox, decided_view):
    decided_view["rows"] = [decided(patient_ref=f"MRN-{n}") for n in range(25)]
    inbox.open([])
    inbox.page.get_by_test_id("view-decided").click()
    expect(inbox.page.get_by_test_id("decided-item")).to_have_count(20)
    inbox.page.get_by_test_id("decided-next").click()
    expect(inbox.page.get_by_test_id("decided-item")).to_have_count(5)
    expect(inbox.page.get_by_test_id("decided-status")).to_contain_text("showing 21–25")
    assert decided_view["queries"][-1] == {"limit": "20", "offset": "20"}


def test_the_tabs_move_with_the_arrow_keys_and_shortcuts_rest_in_the_decided_view(inbox, decided_view):
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
