"""Four eyes mean two people (SPEC section 8): governance or superuser given in the admin waits for a second admin.

`sam` (a superuser, as `make run`'s `admin`) edits accounts; `gina` is an existing governance
admin; `gov2` is an account sam makes in the admin and puts in governance.
"""

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.db import IntegrityError, transaction

from audit.models import AuditEvent
from core.errors import (
    GrantAlreadyPending,
    GrantNeedsSecondAdmin,
    NotGovernanceAdmin,
    ToolChangeNeedsSecondAdmin,
)
from governance import access_grants
from registry import changes as registry_changes
from registry.four_eyes import is_governance_admin
from registry.models import AccessGrant, ToolChange, ToolDescriptor
from tests.helpers.admin_forms import admin_client, post, user_form, user_url
from tests.helpers.personas import PASSWORD, group


@pytest.fixture
def sam(db) -> User:
    return User.objects.create_superuser("sam", password=PASSWORD)


@pytest.fixture
def gov2(sam) -> User:
    """Made by sam in the admin's add form, then put in governance on its change page."""
    http = admin_client(sam)
    added = post(
        http,
        "/admin/auth/user/add/",
        {"username": "gov2", "usable_password": "true", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert added.status_code == 302
    user = User.objects.get(username="gov2")
    response = post(http, user_url(user), user_form(user, groups=[group("governance")], is_staff=True))
    assert response.status_code == 302
    return user


def governance_rows(kind: str) -> list[tuple[str, str]]:
    return list(AuditEvent.objects.filter(kind=kind).order_by("id").values_list("decision", "actor"))


def pending_change(proposer) -> ToolChange:
    return registry_changes.submit("prescribe_medication", {"hitl_tier": "low"}, user=proposer).change


def test_governance_given_in_the_admin_waits_for_a_second_admin(gov2):
    gov2.refresh_from_db()
    assert not gov2.groups.filter(name="governance").exists() and not is_governance_admin(gov2)
    assert gov2.is_staff  # the rest of the edit is saved
    grant = AccessGrant.objects.get(user=gov2)
    assert (grant.status, grant.proposed_by.username, grant.parts()) == ("pending", "sam", ["group governance"])


def test_the_account_and_the_proposed_grant_are_audited_with_their_actor(gov2):
    assert governance_rows("account") == [("created", "user:sam"), ("updated", "user:sam")]
    created, updated = AuditEvent.objects.filter(kind="account").order_by("id")
    assert created.data["after"]["username"] == "gov2" and created.data["before"] is None
    assert (updated.data["before"]["is_staff"], updated.data["after"]["is_staff"]) == (False, True)
    assert updated.data["after"]["groups"] == []
    assert governance_rows("access_grant") == [("proposed", "user:sam")]
    assert AuditEvent.objects.get(kind="access_grant").data["parts"] == ["group governance"]


def test_the_admin_says_the_grant_waits_and_shows_it(sam, db):
    http = admin_client(sam)
    newcomer = User.objects.create_user("newcomer", password=PASSWORD)
    response = post(http, user_url(newcomer), user_form(newcomer, groups=[group("governance")]))
    grant = AccessGrant.objects.get()
    assert response["Location"] == f"/admin/registry/accessgrant/{grant.pk}/change/"
    page = http.get(response["Location"]).content.decode()
    assert "takes effect when a second governance admin confirms it" in page
    assert "you may withdraw it by rejecting it" in page and "Confirm: grant it" not in page


def test_before_the_grant_the_grantee_cannot_confirm_a_registry_change(sam, gov2, catalog):
    change = pending_change(sam)
    with pytest.raises(NotGovernanceAdmin):
        registry_changes.confirm(change.pk, user=gov2)
    refused = post(admin_client(gov2), f"/admin/registry/toolchange/{change.pk}/confirm/", {})
    assert refused.status_code in (302, 403)
    assert ToolDescriptor.objects.get(name="prescribe_medication").hitl_tier == "high"


def test_a_second_existing_governance_admin_confirms_the_grant(gov2, gina):
    grant = AccessGrant.objects.get(user=gov2)
    access_grants.confirm(grant.pk, user=gina)
    gov2 = User.objects.get(pk=gov2.pk)
    assert is_governance_admin(gov2)
    confirmed = AuditEvent.objects.get(kind="access_grant", decision="confirmed")
    assert (confirmed.actor, confirmed.data["before"]["groups"], confirmed.data["after"]["groups"]) == (
        "user:gina",
        [],
        ["governance"],
    )


def test_the_proposer_cannot_confirm_their_own_grant(sam, gov2):
    with pytest.raises(GrantNeedsSecondAdmin, match="you proposed it"):
        access_grants.confirm(AccessGrant.objects.get(user=gov2).pk, user=sam)
    assert not User.objects.get(pk=gov2.pk).groups.exists()


def test_the_grantee_cannot_confirm_their_own_grant(sam, gina, db):
    grant = access_grants.propose(access_grants.Elevation(superuser=True), by=sam, user=gina)
    with pytest.raises(GrantNeedsSecondAdmin, match="it is for you"):
        access_grants.confirm(grant.pk, user=gina)
    assert not User.objects.get(pk=gina.pk).is_superuser


def test_an_admin_whose_grant_the_proposer_made_is_not_a_second_pair_of_eyes(sam, gov2, gina, catalog):
    access_grants.confirm(AccessGrant.objects.get(user=gov2).pk, user=gina)
    gov2 = User.objects.get(pk=gov2.pk)
    change = pending_change(sam)
    with pytest.raises(ToolChangeNeedsSecondAdmin, match="your own grant was proposed or confirmed by sam"):
        registry_changes.confirm(change.pk, user=gov2)
    gov3 = User.objects.create_user("gov3")
    grant = access_grants.propose(access_grants.Elevation(groups=frozenset([group("governance")])), by=sam, user=gov3)
    with pytest.raises(GrantNeedsSecondAdmin):
        access_grants.confirm(grant.pk, user=gov2)
    registry_changes.confirm(change.pk, user=gina)  # an independent admin can
    assert ToolDescriptor.objects.get(name="prescribe_medication").hitl_tier == "low"


def test_the_confirm_button_is_not_offered_to_a_dependent_admin(sam, gov2, gina, catalog):
    access_grants.confirm(AccessGrant.objects.get(user=gov2).pk, user=gina)
    change = pending_change(sam)
    page = admin_client(User.objects.get(pk=gov2.pk)).get(f"/admin/registry/toolchange/{change.pk}/change/")
    assert b"Confirm: apply this change" not in page.content
    assert b"your own grant was proposed or confirmed by sam" in page.content


def test_superuser_given_in_the_admin_is_held_back(sam, rita):
    post(admin_client(sam), user_url(rita), user_form(rita, is_superuser=True, is_staff=True))
    rita.refresh_from_db()
    assert not rita.is_superuser and rita.is_staff
    assert AccessGrant.objects.get(user=rita).parts() == ["superuser"]


def test_the_governance_permission_given_directly_is_held_back(sam, rita):
    governance = Permission.objects.get(codename="change_tooldescriptor")
    post(admin_client(sam), user_url(rita), user_form(rita, permissions=[governance]))
    assert not User.objects.get(pk=rita.pk).user_permissions.exists()
    assert AccessGrant.objects.get(user=rita).parts() == ["permission registry.change_tooldescriptor"]


def test_reactivating_a_governance_admin_is_held_back(sam, gina):
    gina.is_active = False
    gina.save()
    post(admin_client(sam), user_url(gina), user_form(gina, is_active=True))
    assert not User.objects.get(pk=gina.pk).is_active
    assert AccessGrant.objects.get(user=gina).activate


def test_giving_a_group_the_governance_permission_is_held_back(sam, db):
    reviewers = group("reviewers")
    governance = Permission.objects.get(codename="change_tooldescriptor")
    form = {"name": "reviewers", "permissions": [*reviewers.permissions.values_list("pk", flat=True), governance.pk]}
    assert post(admin_client(sam), f"/admin/auth/group/{reviewers.pk}/change/", form).status_code == 302
    assert not reviewers.permissions.filter(pk=governance.pk).exists()
    assert AccessGrant.objects.get(group=reviewers).parts() == ["permission registry.change_tooldescriptor"]


def test_an_account_admin_who_is_not_governance_cannot_give_it(rita, db):
    accounts_admin = User.objects.create_user("ada", password=PASSWORD, is_staff=True)
    accounts_admin.user_permissions.add(*Permission.objects.filter(codename__in=["view_user", "change_user"]))
    http = admin_client(accounts_admin)
    response = post(
        http, user_url(rita), user_form(rita, groups=[group("reviewers"), group("governance")], is_staff=True)
    )
    assert response.status_code == 302
    assert b"Only a governance admin may give governance" in http.get(response["Location"]).content
    rita.refresh_from_db()
    assert not rita.is_staff and list(rita.groups.values_list("name", flat=True)) == ["reviewers"]  # nothing saved
    assert not AccessGrant.objects.exists() and not AuditEvent.objects.filter(kind="account").exists()


def test_a_second_grant_for_the_same_account_waits_for_the_first(sam, gov2):
    with pytest.raises(GrantAlreadyPending):
        access_grants.propose(access_grants.Elevation(superuser=True), by=sam, user=gov2)


def test_a_rejected_grant_gives_nothing(sam, gov2, gina):
    access_grants.reject(AccessGrant.objects.get(user=gov2).pk, user=gina, reason="who is gov2?")
    assert not User.objects.get(pk=gov2.pk).groups.exists()
    rejected = AuditEvent.objects.get(kind="access_grant", decision="rejected")
    assert (rejected.actor, rejected.data["reason"]) == ("user:gina", "who is gov2?")


def test_the_database_refuses_a_grant_confirmed_by_its_proposer_or_grantee(sam, gov2):
    grant = AccessGrant.objects.get(user=gov2)
    for confirmer in (sam, gov2):
        with pytest.raises(IntegrityError), transaction.atomic():
            AccessGrant.objects.filter(pk=grant.pk).update(
                status="confirmed", decided_by=confirmer, decided_at=grant.proposed_at
            )


def test_a_second_admin_confirms_in_the_admin_and_compliance_cannot(gov2, gina, carl):
    grant = AccessGrant.objects.get(user=gov2)
    assert admin_client(carl).get(f"/admin/registry/accessgrant/{grant.pk}/change/").status_code == 200
    assert post(admin_client(carl), f"/admin/registry/accessgrant/{grant.pk}/confirm/", {}).status_code == 403
    http = admin_client(gina)
    assert b"Confirm: grant it" in http.get(f"/admin/registry/accessgrant/{grant.pk}/change/").content
    response = post(http, f"/admin/registry/accessgrant/{grant.pk}/confirm/", {})
    assert response.status_code == 302
    assert User.objects.get(pk=gov2.pk).groups.filter(name="governance").exists()


def test_bootstrap_on_the_command_line_applies_at_once_and_is_audited_as_the_command(db):
    from django.core.management import call_command

    call_command("create_reviewer", "root2", "--password", PASSWORD, "--group", "governance")
    assert is_governance_admin(User.objects.get(username="root2"))
    row = AuditEvent.objects.get(kind="account")
    assert (row.decision, row.actor, row.data["after"]["groups"]) == (
        "created",
        "command:create_reviewer",
        ["governance"],
    )
    assert not AccessGrant.objects.exists()


def test_membership_of_a_group_without_governance_applies_at_once(sam, rita):
    compliance = Group.objects.get(name="compliance")
    post(admin_client(sam), user_url(rita), user_form(rita, groups=[group("reviewers"), compliance]))
    assert User.objects.get(pk=rita.pk).groups.filter(name="compliance").exists()
    assert not AccessGrant.objects.exists()
