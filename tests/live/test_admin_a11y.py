"""axe-core on the admin pages compliance staff use (issue 14): the audit log list and an
entry, the approvals list and an approval, a run, and the dashboard they land on. No
serious or critical violations. Debian's Chromium on a real daphne, signed in as carl
(compliance, read-only) through the admin's own login form.
"""

import json
from pathlib import Path

import pytest

from approvals.models import AuditEvent
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.runs import open_executing_run
from tests.live.axe_scan import serious_violations
from tests.live.e2e_fixtures import browser_page, chromium  # noqa: F401 - a browser per test, the live page
from tests.live.e2e_helpers import PASSWORD
from tests.live.browser import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


@pytest.fixture
def compliance(browser_page, carl):
    browser_page.page.goto(browser_page.server.url("/admin/login/"))
    browser_page.page.get_by_label("Username").fill("carl")
    browser_page.page.get_by_label("Password").fill(PASSWORD)
    with browser_page.page.expect_navigation():
        browser_page.page.get_by_role("button", name="Log in").click()
    return browser_page


@pytest.fixture
def decided(live_agent, live_reviewer):
    """A run with one approval decided, so every page has rows and an audit trail."""
    run_id = open_executing_run(live_agent, title="Bed 4", patient_ref="MRN-61234", care_unit="ICU")
    approval = suspend(live_agent, run_id)
    approve(live_reviewer, approval["id"])
    return run_id, approval["id"]


def admin_pages(run_id, approval_id) -> list[str]:
    audit_id = AuditEvent.objects.filter(approval_id=approval_id).order_by("-pk").values_list("pk", flat=True)[0]
    return ["/admin/", "/admin/approvals/auditevent/", f"/admin/approvals/auditevent/{audit_id}/change/",
            "/admin/approvals/approval/", f"/admin/approvals/approval/{approval_id}/change/",
            f"/admin/runs/run/{run_id}/change/"]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_compliance_pages_have_no_serious_violations(compliance, decided, width):
    compliance.page.set_viewport_size({"width": width, "height": 900})
    found = {}
    for path in admin_pages(*decided):
        response = compliance.page.goto(compliance.server.url(path))
        assert response.status == 200, path
        assert compliance.csp_violations == [], path
        violations = serious_violations(compliance.page)
        if violations:
            found[path] = violations
        # axe's own probes set inline styles, which the policy refuses; the page's were checked above.
        compliance.csp_violations.clear()
    assert found == {}, json.dumps(found, indent=1)
