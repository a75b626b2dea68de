"""Editing args field by field on a 390 px phone, end to end (issue 14).

The prescription's args are flat, so on a phone "Edit args" opens one typed field per
argument; the reviewer changes two of them and approves, and the server holds exactly
the edited args. The page never scrolls sideways and the action bar stays in reach.
Debian's Chromium on a real daphne, PostgreSQL and Redis, as test_inbox_e2e.py.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from approvals.models import Approval
from tests.helpers.approval_loop import PRESCRIPTION, resume
from tests.live.axe_scan import serious_violations
from tests.live.browser import ARTIFACTS_DIR, CHROMIUM
from tests.live.e2e_fixtures import signed_in
from tests.live.test_inbox_e2e import chromium, park_prescription  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(chromium, daphne_server, rita):
    """Rita's inbox on a phone-sized, touch browser context."""
    with signed_in(
        chromium, daphne_server, "rita", viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2
    ) as inbox:
        yield inbox


def scrolls_sideways(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")


def test_a_flat_card_is_edited_field_by_field_on_a_phone_and_approved(phone, live_agent):
    run_id, approval = park_prescription(live_agent)
    card = phone.open_card(approval["id"])
    card.get_by_test_id("edit").click()

    form = card.get_by_test_id("args-form")
    expect(form).to_be_visible()
    expect(card.get_by_test_id("args-editor")).to_be_hidden()
    expect(form.locator('input[name="days"]')).to_have_attribute("type", "number")
    expect(form.locator('input[name="dose"]')).to_have_value("500 mg")
    form.locator('input[name="dose"]').fill("250 mg")
    form.locator('input[name="days"]').fill("5")
    expect(card.get_by_test_id("args-diff")).to_contain_text("2 changes")
    assert not scrolls_sideways(phone.page)
    assert serious_violations(phone.page) == []
    phone.csp_violations.clear()  # axe's own probes set inline styles, which the policy refuses
    actions = card.get_by_test_id("edit-panel").locator(".card__actions")
    assert actions.evaluate("el => getComputedStyle(el).position") == "sticky"
    phone.page.screenshot(path=str(ARTIFACTS_DIR / "inbox-phone-edit.png"))

    card.get_by_test_id("approve-edited").click()
    card.get_by_test_id("confirm-approve").click()  # a prescription is high risk: its edit is confirmed too
    expect(card).to_have_count(0)
    edited = {**PRESCRIPTION, "dose": "250 mg", "days": 5}
    assert Approval.objects.get(pk=approval["id"]).approved_args == edited
    resumed = resume(live_agent, run_id, approval["id"], edited)
    assert resumed.status_code == 200, resumed.content
