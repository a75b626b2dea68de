"""Who is a governance admin, and who may confirm whose proposal.

A risk-lowering registry change (registry/changes.py) and a grant of
governance or superuser (governance/access_grants.py) take effect only when a
second governance admin confirms them. Second means another person: not the
proposer, and not someone whose own governance or superuser grant the proposer
proposed or confirmed, since an admin could otherwise mint the second pair of eyes
they need.
"""

from django.contrib.auth.models import Permission
from django.db.models import Q

from registry.models import AccessGrant, AccessGrantStatus

# Holding it makes a governance admin: the registry's one edit right (a superuser holds every permission).
GOVERNANCE_APP, GOVERNANCE_CODENAME = "registry", "change_tooldescriptor"
GOVERNANCE_PERMISSION = f"{GOVERNANCE_APP}.{GOVERNANCE_CODENAME}"


def is_governance_admin(user) -> bool:
    return user is not None and user.is_active and user.has_perm(GOVERNANCE_PERMISSION)


def governance_permission() -> Permission:
    return Permission.objects.get(content_type__app_label=GOVERNANCE_APP, codename=GOVERNANCE_CODENAME)


def dependence(confirmer, proposer) -> str | None:
    """Why `confirmer` is not a second pair of eyes to `proposer`'s proposal, or None if they are."""
    if confirmer.pk == proposer.pk:
        return "you proposed it"
    made_by_proposer = AccessGrant.objects.filter(
        Q(user=confirmer) | Q(group__in=confirmer.groups.all()),
        Q(proposed_by=proposer) | Q(decided_by=proposer),
        status=AccessGrantStatus.CONFIRMED,
    )
    if made_by_proposer.exists():
        return f"your own grant was proposed or confirmed by {proposer.get_username()}"
    return None
