from django.conf import settings
from django.db import models

from registry.models.proposal import Proposal, ProposalStatus, decided_iff_not_pending

AccessGrantStatus = ProposalStatus


class AccessGrant(Proposal):
    """Governance or superuser asked for through the admin, held back until a second governance admin confirms.

    The grantee is one account (`user`) or one group (`group`, when the governance
    permission is added to it). What was held back: `superuser`, `activate` (an
    account that would hold governance or superuser again once active), `groups` that
    carry the governance permission, and the governance `permissions` themselves
    (governance/access_grants.py decides which parts of an edit these are).
    """

    Status = AccessGrantStatus

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="access_grants"
    )
    group = models.ForeignKey(
        "auth.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="access_grants"
    )
    superuser = models.BooleanField(default=False)
    activate = models.BooleanField(default=False)
    groups = models.ManyToManyField("auth.Group", blank=True, related_name="+")
    permissions = models.ManyToManyField("auth.Permission", blank=True, related_name="+")

    class Meta(Proposal.Meta):
        db_table = "approvals_accessgrant"  # the table it had before the layout move
        constraints = [
            models.CheckConstraint(
                name="access_grant_one_grantee",
                condition=models.Q(user__isnull=False, group__isnull=True)
                | models.Q(user__isnull=True, group__isnull=False),
            ),
            # A second proposal for the same grantee would be judged against a state the first may change.
            models.UniqueConstraint(
                fields=["user"], condition=models.Q(status="pending"), name="one_pending_grant_per_user"
            ),
            models.UniqueConstraint(
                fields=["group"], condition=models.Q(status="pending"), name="one_pending_grant_per_group"
            ),
            decided_iff_not_pending("access_grant_decided_iff_not_pending"),
            # Four eyes, in the database: neither the proposer nor the grantee confirms.
            models.CheckConstraint(
                name="access_grant_confirmed_by_another_admin",
                condition=~models.Q(status="confirmed")
                | (
                    ~models.Q(decided_by=models.F("proposed_by"))
                    & (models.Q(user__isnull=True) | ~models.Q(decided_by=models.F("user")))
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"grant #{self.pk} to {self.grantee_name} ({self.status})"

    @property
    def grantee_name(self) -> str:
        return f"user {self.user.get_username()}" if self.user_id else f"group {self.group.name}"

    def parts(self) -> list[str]:
        """What the grant gives, in words, as the admin and the audit rows say it."""
        # .all(), so a list page's prefetch_related("groups", "permissions__content_type") serves it.
        parts = ["superuser"] if self.superuser else []
        parts += [f"group {name}" for name in sorted(group.name for group in self.groups.all())]
        parts += [f"permission {label}" for label in permission_labels(self.permissions.all())]
        if self.activate:
            parts.append("reactivation (the account holds governance or superuser)")
        return parts

    def snapshot(self) -> dict:
        """The grant as its audit rows record it."""
        grantee = {"user": self.user.get_username()} if self.user_id else {"group": self.group.name}
        return {"grant": self.pk, **grantee, "parts": self.parts(), "proposed_by": self.proposed_by.get_username()}


def permission_labels(permissions) -> list[str]:
    """`app_label.codename` of each permission, sorted: how the audit log names a permission."""
    return sorted(f"{p.content_type.app_label}.{p.codename}" for p in permissions)
