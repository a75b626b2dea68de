"""The admin index lays Condor's dashboard out as a table that reads, at a desktop's and a phone's width.

Django's own dashboard.css styles every table of a `.module` on the index: each header
cell takes the whole width and no data cell may wrap, so beside a long value a label
shrinks to one letter per line. Debian's Chromium on a real daphne measures what is drawn,
signed in as carl (compliance) through the admin's own login form.
"""

from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from approvals.escalation import EMAIL_FAILED
from approvals.models import Approval, ReviewTeam
from audit import trail as audit
from governance.admin_dashboard import SWEEP_COUNTS
from registry.policy import RULE_IDS
from runs import heartbeats
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.runs import open_executing_run
from tests.live.browser import CHROMIUM
from tests.live.e2e_fixtures import browser_page, chromium  # noqa: F401 - a browser per test, the live page
from tests.live.test_admin_a11y import compliance  # noqa: F401 - carl, signed in to the admin

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

DESKTOP_HEIGHT_AT_MOST = 1800  # the console, an app module per app compliance reads (six), the recent actions
PHONE_HEIGHT_AT_MOST = 3200


@pytest.fixture
def working_day(live_agent, live_reviewer, ward_agent):
    """Every row of the dashboard at its longest: a card waiting for hours, decisions, the rules the gate hit,
    an e-mail that did not leave, unrouted cards, a sweep pass and a verification."""
    decided = suspend(live_agent, open_executing_run(live_agent, patient_ref="MRN-61234", care_unit="ICU"))
    approve(live_reviewer, decided["id"])
    waiting = suspend(live_agent, open_executing_run(live_agent, patient_ref="MRN-20417", care_unit="Ward 4"))
    Approval.objects.filter(pk=waiting["id"]).update(requested_at=timezone.now() - timedelta(hours=3, minutes=7))
    ReviewTeam.objects.create(name="Cardiology", care_units=["Cardiology"])
    approval = Approval.objects.get(pk=waiting["id"])
    with transaction.atomic():
        audit.record_all(
            [
                audit.entry(
                    audit.Kind.VERDICT,
                    actor_client=ward_agent,
                    tool="prescribe_medication",
                    decision="require_approval",
                    rule_id=rule,
                )
                for rule in RULE_IDS
            ]
        )
    audit.record(audit.Kind.ESCALATION, approval=approval, actor_system=audit.SWEEP, decision=EMAIL_FAILED)
    heartbeats.beat(heartbeats.SWEEP, {**{name: 12 for name in SWEEP_COUNTS}, "seconds": 0.42})
    audit.record(audit.Kind.VERIFY, actor_system=audit.command("verify_audit"), decision="intact")


def measure(page) -> dict:
    """What the index draws: the page's size, and each dashboard cell's width and count of lines."""
    return page.evaluate("""() => {
        const lines = (cell) => {
            const range = document.createRange();
            range.selectNodeContents(cell);
            return new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0)
                                .map((r) => Math.round(r.bottom))).size;
        };
        const cells = (selector) => Array.from(document.querySelectorAll(selector)).map((cell) => ({
            text: cell.textContent.trim(), width: cell.getBoundingClientRect().width, lines: lines(cell)}));
        return {
            height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
            viewport: window.innerWidth,
            table: document.querySelector('#condor-dashboard').getBoundingClientRect().width,
            labels: cells('#condor-dashboard th'), values: cells('#condor-dashboard td'),
        };
    }""")


@pytest.mark.parametrize(
    ("width", "height_at_most"),
    [(1440, DESKTOP_HEIGHT_AT_MOST), (1920, DESKTOP_HEIGHT_AT_MOST), (390, PHONE_HEIGHT_AT_MOST)],
)
def test_the_dashboard_reads_as_a_table_at_every_width(compliance, working_day, width, height_at_most):
    compliance.page.set_viewport_size({"width": width, "height": 900})
    assert compliance.page.goto(compliance.server.url("/admin/")).status == 200
    drawn = measure(compliance.page)
    assert len(drawn["labels"]) == 12, drawn["labels"]  # every row of the board is there
    squeezed = [cell for cell in drawn["labels"] + drawn["values"] if cell["width"] < drawn["table"] / 4]
    assert squeezed == [], squeezed
    assert max(label["lines"] for label in drawn["labels"]) <= 2
    assert [label["lines"] for label in drawn["labels"] if label["text"] == "Pending now"] == [1]
    # A cell may wrap, but never down to a few letters a line.
    crushed = [
        cell
        for cell in drawn["labels"] + drawn["values"]
        if cell["lines"] > 1 and len(cell["text"]) / cell["lines"] < 10
    ]
    assert crushed == [], crushed
    assert drawn["width"] <= drawn["viewport"], "the page scrolls sideways"
    assert drawn["height"] <= height_at_most
