"""A signed-in person's user read, one kept statement (approvals/auth_backends.py): it answers as
Django's ModelBackend does, with the reviewer's membership and teams."""

import pytest
from django.contrib.auth.models import Group, User

from agents.auth import is_reviewer
from approvals.auth_backends import ReviewerAwareModelBackend
from approvals.models import ReviewTeam
from approvals.visibility import read_teams, reviewer_scope

pytestmark = pytest.mark.django_db


@pytest.fixture
def backend():
    return ReviewerAwareModelBackend()


def test_a_reviewer_is_loaded_knowing_they_review(backend):
    rita = User.objects.create(username="rita-reads")
    rita.groups.add(Group.objects.get(name="reviewers"))
    loaded = backend.get_user(rita.pk)
    assert loaded == rita and loaded.username == "rita-reads" and is_reviewer(loaded) is True


def test_someone_else_is_loaded_knowing_they_do_not(backend):
    clara = User.objects.create(username="clara-reads")
    clara.groups.add(Group.objects.get(name="compliance"))
    assert is_reviewer(backend.get_user(clara.pk)) is False


def test_an_inactive_or_missing_user_is_nobody(backend):
    gone = User.objects.create(username="gone-reads", is_active=False)
    assert backend.get_user(gone.pk) is None
    assert backend.get_user(gone.pk + 1000) is None
    assert backend.get_user("not-a-number") is None


def test_a_reviewer_is_loaded_with_their_teams_as_their_own_read_reads_them(backend):
    rita, rob = (User.objects.create(username=name) for name in ("rita-teams", "rob-teams"))
    for person in (rita, rob):
        person.groups.add(Group.objects.get(name="reviewers"))
    ReviewTeam.objects.create(name="ICU", care_units=["ICU", "HDU"]).members.add(rita)
    ReviewTeam.objects.create(name="Cardiology", care_units=["Cardiology"]).members.add(rob)
    ReviewTeam.objects.create(name="Everyone else", care_units=[], is_default=True).members.add(rob)
    for person in (rita, rob):
        loaded = backend.get_user(person.pk)
        assert sorted(loaded._condor_review_teams) == sorted(read_teams(person.pk))
        assert reviewer_scope(loaded) == reviewer_scope(User.objects.get(pk=person.pk))
    scope = reviewer_scope(backend.get_user(rita.pk))
    assert scope.units == {"ICU", "HDU"} and not scope.sees_unrouted


def test_with_no_team_a_reviewer_is_loaded_seeing_every_card(backend):
    rita = User.objects.create(username="rita-no-teams")
    rita.groups.add(Group.objects.get(name="reviewers"))
    loaded = backend.get_user(rita.pk)
    assert loaded._condor_review_teams == [] and reviewer_scope(loaded).routed is False
