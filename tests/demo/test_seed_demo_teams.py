"""`make run`'s demo data routes cards: two wards, a reviewer each, `reviewer` in both, and a four-eyes card;
and two governance admins, so a grant of governance can be proposed and confirmed."""

from django.contrib.auth.models import User

from agents.models import ApiClient
from approvals.models import Approval, ReviewTeam
from approvals.visibility import pending_approvals, reviewer_scope
from audit.models import AuditEvent
from demo.management.commands.seed_demo import PEOPLE, Command
from registry.four_eyes import is_governance_admin


def seed():
    command = Command()
    for person in PEOPLE:
        command._person(*person)
    command._teams()
    command._pending_cards(ApiClient.objects.create(name="demo-agent"))


def tools_seen_by(username) -> set[str]:
    return {a.tool for a in pending_approvals(reviewer_scope(User.objects.get(username=username)))}


def test_each_ward_sees_its_cards_and_reviewer_sees_both(db):
    seed()
    assert tools_seen_by("ward6") == {"sign_document"}
    assert "sign_document" not in tools_seen_by("ward4") and "prescribe_medication" in tools_seen_by("ward4")
    assert tools_seen_by("reviewer") == tools_seen_by("ward4") | tools_seen_by("ward6")
    assert Approval.objects.get(tool="sign_document").approvals_required == 2


def test_seeding_teams_twice_changes_nothing_and_is_audited_once(db):
    seed()
    Command()._teams()
    assert ReviewTeam.objects.count() == 2
    assert AuditEvent.objects.filter(kind="review_team", actor="command:seed_demo").count() == 2


def test_the_demo_has_two_governance_admins_so_four_eyes_can_be_tried(db):
    seed()
    governance = [u.username for u in User.objects.order_by("username") if is_governance_admin(u)]
    assert governance == ["admin", "admin2"]
    assert User.objects.get(username="admin").is_superuser  # edits accounts: proposes grants
