"""axe-core on the admin pages compliance and governance use: the index and its dashboard, the audit log,
approvals, tool calls, runs, sessions, the tool registry and its changes, the simulator, access grants and
review teams, quick rejection reasons; lists and records, and the forms governance edits. No serious or critical violations. Debian's
Chromium on a real daphne, signed in through the admin's own login form as carl (compliance, read-only) and
as gina (governance).
"""

import json
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User

from approvals.models import QuickReason, ReviewTeam, ToolCall
from audit.models import AuditEvent
from governance import access_grants
from registry import changes as registry_changes
from registry.models import AccessGrant, ToolChange, ToolDescriptor
from runs.models import Run
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.runs import open_executing_run
from tests.live.axe_scan import serious_violations
from tests.live.browser import CHROMIUM
from tests.live.e2e_fixtures import browser_page, chromium  # noqa: F401 - a browser per test, the live page
from tests.live.e2e_helpers import PASSWORD

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SIMULATED = {
    "tool": "prescribe_medication",
    "op": "create",
    "autonomy": "guarded",
    "age_band": "adult",
    "args": json.dumps({"drug": "amoxicillin", "dose": "500 mg"}),
    "metadata": "{}",
}


def sign_in(browser_page, username: str):
    browser_page.page.goto(browser_page.server.url("/admin/login/"))
    browser_page.page.get_by_label("Username").fill(username)
    browser_page.page.get_by_label("Password").fill(PASSWORD)
    with browser_page.page.expect_navigation():
        browser_page.page.get_by_role("button", name="Log in").click()
    return browser_page


@pytest.fixture
def compliance(browser_page, carl):
    return sign_in(browser_page, "carl")


@pytest.fixture
def governance(browser_page, gina):
    return sign_in(browser_page, "gina")


@pytest.fixture
def decided(live_agent, live_reviewer):
    """A run with one approval decided, so every page has rows and an audit trail."""
    run_id = open_executing_run(live_agent, title="Bed 4", patient_ref="MRN-61234", care_unit="ICU")
    approval = suspend(live_agent, run_id)
    approve(live_reviewer, approval["id"])
    return run_id, approval["id"]


@pytest.fixture
def console(decided, catalog) -> dict[str, str]:
    """A row on every console page: a decided approval, a review team, a registry change and an access grant
    waiting for a second governance admin."""
    run_id, approval_id = decided
    pat = User.objects.create_superuser("pat", password=PASSWORD)
    registry_changes.submit("prescribe_medication", {"hitl_tier": "low"}, user=pat)
    access_grants.propose(access_grants.Elevation(superuser=True), by=pat, user=User.objects.create_user("newcomer"))
    team = ReviewTeam.objects.create(name="Intensive care", care_units=["ICU"])
    team.members.set([pat])
    run = Run.objects.get(pk=run_id)
    return {
        "audit": AuditEvent.objects.filter(approval_id=approval_id).order_by("-pk").values_list("pk", flat=True)[0],
        "approval": approval_id,
        "run": run_id,
        "session": run.session_id,
        "call": ToolCall.objects.filter(run=run).values_list("pk", flat=True)[0],
        "tool": ToolDescriptor.objects.get(name="prescribe_medication").pk,
        "change": ToolChange.objects.get().pk,
        "grant": AccessGrant.objects.get().pk,
        "team": team.pk,
        "reason": QuickReason.objects.create(text="Duplicate of an existing order").pk,
    }


def console_pages(ids: dict) -> list[str]:
    """The pages both groups read."""
    return [
        "/admin/",
        "/admin/audit/auditevent/",
        f"/admin/audit/auditevent/{ids['audit']}/change/",
        "/admin/audit/auditevent/?q=amoxicillin",
        "/admin/approvals/approval/",
        f"/admin/approvals/approval/{ids['approval']}/change/",
        "/admin/approvals/toolcall/",
        f"/admin/approvals/toolcall/{ids['call']}/change/",
        "/admin/runs/run/",
        f"/admin/runs/run/{ids['run']}/change/",
        "/admin/sessions_app/session/",
        f"/admin/sessions_app/session/{ids['session']}/change/",
        "/admin/registry/tooldescriptor/",
        f"/admin/registry/tooldescriptor/{ids['tool']}/change/",
        "/admin/registry/toolchange/",
        f"/admin/registry/toolchange/{ids['change']}/change/",
        "/admin/registry/tooldescriptor/simulator/",
        f"/admin/registry/tooldescriptor/simulator/?{urlencode(SIMULATED)}",
        "/admin/registry/accessgrant/",
        f"/admin/registry/accessgrant/{ids['grant']}/change/",
        "/admin/approvals/reviewteam/",
        f"/admin/approvals/reviewteam/{ids['team']}/change/",
        "/admin/approvals/quickreason/",
        f"/admin/approvals/quickreason/{ids['reason']}/change/",
    ]


# Governance edits these; compliance reads the same records through the pages above.
GOVERNANCE_FORMS = [
    "/admin/approvals/reviewteam/add/",
    "/admin/registry/tooldescriptor/add/",
    "/admin/approvals/quickreason/add/",
    "/admin/agents/apiclient/",
    "/admin/agents/apiclient/add/",
]


def violations_on(signed_in, paths: list[str]) -> dict:
    found = {}
    for path in paths:
        response = signed_in.page.goto(signed_in.server.url(path))
        assert response.status == 200, path
        assert signed_in.csp_violations == [], path
        violations = serious_violations(signed_in.page)
        if violations:
            found[path] = violations
        # axe's own probes set inline styles, which the policy refuses; the page's were checked above.
        signed_in.csp_violations.clear()
    return found


@pytest.mark.parametrize("width", [1280, 390])
def test_the_pages_compliance_reads_have_no_serious_violations(compliance, console, width):
    compliance.page.set_viewport_size({"width": width, "height": 900})
    found = violations_on(compliance, console_pages(console))
    assert found == {}, json.dumps(found, indent=1)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_pages_governance_reads_and_edits_have_no_serious_violations(governance, console, width):
    governance.page.set_viewport_size({"width": width, "height": 900})
    found = violations_on(governance, console_pages(console) + GOVERNANCE_FORMS)
    assert found == {}, json.dumps(found, indent=1)
