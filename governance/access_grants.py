"""Four eyes on power: governance or superuser given in the admin waits for a second governance admin.

Otherwise one admin could create a second account, make it a governance admin and
confirm their own risk-lowering registry changes with it. So when an edit of an
account or a group would give someone governance (the registry's edit right) or
superuser they do not hold now, the admin saves the rest of the edit and holds that
part back as a pending `AccessGrant`; it takes effect when another governance admin
`confirm`s it, one who is neither the proposer, nor the grantee, nor someone whose
own grant the proposer proposed or confirmed (registry/four_eyes.py). Proposal,
confirmation and rejection are `access_grant` audit rows.

Held back (`elevation`): superuser off → on; a new membership of a group that holds
the governance permission; the governance permission added to an account or a
group; and reactivating an account that would then hold either. The first
governance admins are made on the command line (`create_reviewer … --group
governance`), audited as such.
"""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction

from audit import trail as audit
from core.errors import GrantAlreadyPending, GrantNeedsSecondAdmin, GrantNotPending, NotGovernanceAdmin
from governance.accounts import group_snapshot, user_snapshot
from registry.four_eyes import dependence, governance_permission, is_governance_admin
from registry.models import AccessGrant, AccessGrantStatus


@dataclass(frozen=True)
class Elevation:
    """The parts of an edit that would give governance or superuser: what a grant holds back."""

    superuser: bool = False
    activate: bool = False
    groups: frozenset = frozenset()
    permissions: frozenset = frozenset()

    def __bool__(self) -> bool:
        return self.superuser or self.activate or bool(self.groups) or bool(self.permissions)


def user_elevation(stored, *, is_active: bool, is_superuser: bool, groups=None, permissions=None) -> Elevation:
    """What of an account's asked-for state gives governance or superuser it does not hold now.

    `stored` is the account as saved (None: a new one); `groups` and `permissions` are the
    asked-for sets (None: unchanged).
    """
    governance = governance_permission()
    had_groups = set(stored.groups.all()) if stored is not None else set()
    had_permissions = set(stored.user_permissions.all()) if stored is not None else set()
    groups = had_groups if groups is None else set(groups)
    permissions = had_permissions if permissions is None else set(permissions)
    governing = set(Group.objects.filter(permissions=governance))
    new_groups = (groups - had_groups) & governing
    new_permissions = (permissions - had_permissions) & {governance}
    superuser = is_superuser and not (stored is not None and stored.is_superuser)
    # What the account holds without the parts above: coming back to life with it is a grant too.
    standing = (
        (stored is not None and stored.is_superuser)
        or bool((groups - new_groups) & governing)
        or governance in permissions - new_permissions
    )
    activate = stored is not None and not stored.is_active and is_active and standing
    return Elevation(superuser, activate, frozenset(new_groups), frozenset(new_permissions))


def group_elevation(stored, permissions=None) -> Elevation:
    """The governance permission, if the asked-for `permissions` add it to the group `stored` (None: a new one)."""
    if permissions is None:
        return Elevation()
    had = set(stored.permissions.all()) if stored is not None else set()
    return Elevation(permissions=frozenset((set(permissions) - had) & {governance_permission()}))


@transaction.atomic
def propose(elevation: Elevation, *, by, user=None, group=None) -> AccessGrant:
    """Hold `elevation` of the account `user` (or the group `group`) back until a second governance admin confirms.

    `by` must be a governance admin (NotGovernanceAdmin); a grantee has at most one
    pending grant (GrantAlreadyPending). Runs in the caller's transaction when there is one.
    """
    if not is_governance_admin(by):
        raise NotGovernanceAdmin(
            "Only a governance admin may give governance or superuser, and a second one must confirm it."
        )
    grantee = {"user": user} if user is not None else {"group": group}
    if AccessGrant.objects.filter(status=AccessGrantStatus.PENDING, **grantee).exists():
        raise GrantAlreadyPending()
    try:
        with transaction.atomic():
            grant = AccessGrant.objects.create(
                superuser=elevation.superuser, activate=elevation.activate, proposed_by=by, **grantee
            )
    except IntegrityError:  # proposed by someone else since the check above
        raise GrantAlreadyPending() from None
    grant.groups.set(elevation.groups)
    grant.permissions.set(elevation.permissions)
    audit.record(audit.Kind.ACCESS_GRANT, actor_user=by, decision="proposed", data=grant.snapshot())
    return grant


def _locked_pending(grant_id: int) -> AccessGrant:
    grant = (
        AccessGrant.objects.select_for_update(of=("self",))
        .select_related("user", "group", "proposed_by")
        .get(pk=grant_id)
    )
    if grant.status != AccessGrantStatus.PENDING:
        raise GrantNotPending()
    return grant


def why_not_confirmer(grant: AccessGrant, user) -> str | None:
    """Why `user` may not confirm `grant` (a governance admin is assumed), or None."""
    if grant.user_id is not None and grant.user_id == user.pk:
        return "it is for you"
    return dependence(user, grant.proposed_by)


@transaction.atomic
def confirm(grant_id: int, *, user) -> AccessGrant:
    """A second governance admin confirms: the grant takes effect exactly as proposed."""
    grant = _locked_pending(grant_id)
    if not is_governance_admin(user):
        raise NotGovernanceAdmin()
    if (why := why_not_confirmer(grant, user)) is not None:
        raise GrantNeedsSecondAdmin(f"{GrantNeedsSecondAdmin.default_detail} Not you: {why}.")
    if grant.user_id is not None:
        grantee = get_user_model().objects.select_for_update().get(pk=grant.user_id)
        before = user_snapshot(grantee)
        grantee.is_superuser = grantee.is_superuser or grant.superuser
        grantee.is_active = grantee.is_active or grant.activate
        grantee.save(update_fields=["is_superuser", "is_active"])
        grantee.groups.add(*grant.groups.all())
        grantee.user_permissions.add(*grant.permissions.all())
        after = user_snapshot(grantee)
    else:
        before = group_snapshot(grant.group)
        grant.group.permissions.add(*grant.permissions.all())
        after = group_snapshot(grant.group)
    grant.decide(AccessGrantStatus.CONFIRMED, user)
    audit.record(
        audit.Kind.ACCESS_GRANT,
        actor_user=user,
        decision="confirmed",
        data={**grant.snapshot(), "before": before, "after": after},
    )
    return grant


@transaction.atomic
def reject(grant_id: int, *, user, reason: str = "") -> AccessGrant:
    """A governance admin rejects the grant (its proposer may: that withdraws it). Nothing changes."""
    grant = _locked_pending(grant_id)
    if not is_governance_admin(user):
        raise NotGovernanceAdmin()
    grant.decide(AccessGrantStatus.REJECTED, user, reason)
    audit.record(
        audit.Kind.ACCESS_GRANT, actor_user=user, decision="rejected", data={**grant.snapshot(), "reason": reason}
    )
    return grant
