"""Bulk decisions in the inbox, end to end: Rita ticks three low-risk lines, gives one reason, confirms once,
and each card is decided and audited on its own with the bulk's id. A high-risk line has no checkbox.
Debian's Chromium on a real daphne, PostgreSQL and Redis, as test_inbox_e2e.py.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from approvals.models import Approval, ApprovalStatus, QuickReason
from audit.models import AuditEvent
from tests.helpers.approval_loop import suspend
from tests.helpers.runs import open_executing_run
from tests.live.browser import CHROMIUM
from tests.live.test_inbox_e2e import browser_page, chromium, inbox  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

VITALS = {"pulse": 88, "temperature_c": 37.9}


def park_vitals(agent, n: int) -> list[dict]:
    return [
        suspend(
            agent,
            open_executing_run(agent, patient_ref=f"MRN-9300{i}", age_band="adult"),
            tool="record_vitals",
            args=VITALS,
        )
        for i in range(n)
    ]


def line(inbox, approval_id):
    return inbox.page.locator(f'[data-testid="queue-row"][data-approval-id="{approval_id}"]')


def test_three_low_risk_cards_are_approved_with_one_reason_and_one_confirmation(inbox, live_agent):
    low = park_vitals(live_agent, 3)
    high = suspend(live_agent, open_executing_run(live_agent, patient_ref="MRN-93999", age_band="adult"))
    page = inbox.page
    for card in low:
        expect(line(inbox, card["id"])).to_be_visible()
    expect(line(inbox, high["id"])).to_be_visible()
    expect(line(inbox, high["id"]).get_by_test_id("bulk-select")).to_have_count(0)  # never in a bulk

    for card in low:
        box = line(inbox, card["id"]).get_by_test_id("bulk-select")
        expect(box).to_have_accessible_name(f"Select record_vitals · create ({card_patient(card)}) for a bulk decision")
        box.check()
    expect(page.locator(".card.is-open")).to_have_count(0)  # ticking a line does not open its card
    expect(page.get_by_test_id("bulk-count")).to_have_text("3 cards selected")

    page.get_by_test_id("bulk-approve").click()
    panel = page.get_by_test_id("bulk-panel")
    expect(panel.get_by_test_id("bulk-summary")).to_have_text("Approve 3 cards, each decided and audited on its own:")
    expect(panel.locator("li")).to_have_count(3)
    confirm = page.get_by_test_id("bulk-confirm")
    expect(confirm).to_be_disabled()  # one reason first
    page.get_by_test_id("bulk-reason").fill("Routine observations, in range")
    confirm.click()

    expect(inbox.feedback).to_contain_text("Approved 3 cards, each on its own.")
    for card in low:
        expect(line(inbox, card["id"])).to_have_count(0)
    expect(page.get_by_test_id("bulk-bar")).to_be_hidden()
    rows = AuditEvent.objects.filter(kind=AuditEvent.Kind.DECISION, approval_id__in=[c["id"] for c in low])
    assert rows.count() == 3
    assert len({r.data["bulk_id"] for r in rows}) == 1
    assert set(Approval.objects.filter(pk__in=[c["id"] for c in low]).values_list("status", flat=True)) == {
        ApprovalStatus.APPROVED
    }
    assert Approval.objects.get(pk=high["id"]).status == ApprovalStatus.PENDING


def card_patient(card) -> str:
    return Approval.objects.select_related("session").get(pk=card["id"]).session.patient_ref


def test_a_bulk_rejection_offers_governances_quick_reasons(inbox, live_agent):
    QuickReason.objects.create(text="Duplicate of an existing order", position=1)
    low = park_vitals(live_agent, 2)
    inbox.page.reload()  # the page is given the reasons when it loads
    inbox.wait_live()
    for card in low:
        line(inbox, card["id"]).get_by_test_id("bulk-select").check()
    inbox.page.get_by_test_id("bulk-reject").click()
    inbox.page.get_by_test_id("bulk-panel").get_by_test_id("quick-reason").click()
    reason = inbox.page.get_by_test_id("bulk-reason")
    expect(reason).to_have_value("Duplicate of an existing order")
    expect(reason).to_be_focused()
    inbox.page.keyboard.type(" (see the 09:00 entry)")  # still editable
    inbox.page.get_by_test_id("bulk-confirm").click()
    expect(inbox.feedback).to_contain_text("Rejected 2 cards")
    assert set(Approval.objects.filter(pk__in=[c["id"] for c in low]).values_list("decision_reason", flat=True)) == {
        "Duplicate of an existing order (see the 09:00 entry)"
    }
