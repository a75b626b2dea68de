"""Accounts, groups and access grants in the admin: every change audited, power given only by four eyes.

Django's own user and group pages, with two additions. Each save, delete and
password change leaves an `account` audit row in the admin's transaction
(governance/accounts.py). And the part of an edit that would give governance or
superuser (governance/access_grants.py) is held back: the rest is saved, that part
becomes a pending grant, and the page goes to it, where a second governance admin
confirms or rejects it.
"""

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters

from audit import trail as audit
from core.errors import CondorError, NotGovernanceAdmin
from governance import access_grants
from governance.accounts import group_snapshot, record_password_set, user_snapshot
from governance.admin_audited import AuditedChangesAdmin
from governance.admin_four_eyes import ProposalAdmin
from registry.four_eyes import is_governance_admin
from registry.models import AccessGrant


class GrantHoldingAdmin(AuditedChangesAdmin):
    """Mixin: what in the saved form gives governance or superuser waits for a second admin as an AccessGrant."""

    audit_kind = audit.Kind.ACCOUNT
    grantee: str  # "user" or "group": the AccessGrant field the edited object goes in

    def elevation(self, stored, obj, form) -> access_grants.Elevation:
        raise NotImplementedError

    def hold_back(self, obj, form, elevation: access_grants.Elevation) -> None:
        """Leave `elevation` out of what the form is about to save."""
        raise NotImplementedError

    def save_model(self, request, obj, form, change):
        stored = type(obj)._default_manager.filter(pk=obj.pk).first() if change else None
        elevation = self.elevation(stored, obj, form)
        if elevation:
            if not is_governance_admin(request.user):
                # Before anything is saved: the whole edit is refused, not half of it.
                raise NotGovernanceAdmin(
                    "Only a governance admin may give governance or superuser, and a second one must confirm it."
                )
            self.hold_back(obj, form, elevation)
        request._held_back = elevation
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)  # saves what was not held back, and audits it
        if request._held_back:
            request._access_grant = access_grants.propose(
                request._held_back, by=request.user, **{self.grantee: form.instance}
            )

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except CondorError as error:  # nothing of the edit was saved (the admin's transaction rolled back)
            self.message_user(request, error.detail, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def response_add(self, request, obj, post_url_continue=None):
        return self._proposed(request) or super().response_add(request, obj, post_url_continue)

    def response_change(self, request, obj):
        return self._proposed(request) or super().response_change(request, obj)

    def _proposed(self, request):
        grant = getattr(request, "_access_grant", None)
        if grant is None:
            return None
        self.message_user(
            request,
            f"Saved, except {'; '.join(grant.parts())}: that gives governance or superuser, "
            f"so it was saved as grant #{grant.pk} and takes effect when a second governance "
            "admin confirms it.",
            messages.WARNING,
        )
        return HttpResponseRedirect(reverse("admin:registry_accessgrant_change", args=[grant.pk]))


admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class AccountAdmin(GrantHoldingAdmin, UserAdmin):
    audit_id_key, grantee = "user_id", "user"

    def audit_snapshot(self, user) -> dict:
        return user_snapshot(user)

    def elevation(self, stored, user, form):
        return access_grants.user_elevation(
            stored,
            is_active=user.is_active,
            is_superuser=user.is_superuser,
            groups=form.cleaned_data.get("groups"),
            permissions=form.cleaned_data.get("user_permissions"),
        )

    def hold_back(self, user, form, elevation):
        if elevation.superuser:
            user.is_superuser = False
        if elevation.activate:
            user.is_active = False
        for field, held in (("groups", elevation.groups), ("user_permissions", elevation.permissions)):
            if held and field in form.cleaned_data:
                form.cleaned_data[field] = [item for item in form.cleaned_data[field] if item not in held]

    @method_decorator(sensitive_post_parameters())
    def user_change_password(self, request, id, form_url=""):
        if request.method != "POST":
            return super().user_change_password(request, id, form_url)
        with transaction.atomic():
            user = self.get_object(request, unquote(id))
            stored_hash = user.password if user is not None else None
            response = super().user_change_password(request, id, form_url)
            if user is not None:
                user.refresh_from_db(fields=["password"])
                if user.password != stored_hash:
                    record_password_set(user, actor_user=request.user)
            return response


@admin.register(Group)
class AccountGroupAdmin(GrantHoldingAdmin, GroupAdmin):
    audit_id_key, grantee = "group_id", "group"

    def audit_snapshot(self, group) -> dict:
        return group_snapshot(group)

    def elevation(self, stored, group, form):
        return access_grants.group_elevation(stored, form.cleaned_data.get("permissions"))

    def hold_back(self, group, form, elevation):
        form.cleaned_data["permissions"] = [
            p for p in form.cleaned_data["permissions"] if p not in elevation.permissions
        ]


@admin.register(AccessGrant)
class AccessGrantAdmin(ProposalAdmin):
    """Pending and decided grants of governance or superuser; confirm and reject are POST buttons on the page."""

    list_display = (
        "id",
        "grantee",
        "what",
        "status",
        "proposed_by_name",
        "proposed_at",
        "decided_by_name",
        "decided_at",
    )
    list_filter = ("status",)
    search_fields = ("user__username", "group__name")
    list_select_related = ("user", "group", "proposed_by", "decided_by")
    fields = (
        "grantee",
        "what",
        "status",
        "proposed_by_name",
        "proposed_at",
        "decided_by_name",
        "decided_at",
        "decision_reason",
    )
    readonly_fields = fields
    confirmed_message = "Confirmed: the grant is now in effect."
    rejected_message = "Rejected: nothing was granted."

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("groups", "permissions__content_type")

    @admin.display(description="For")
    def grantee(self, grant):
        return grant.grantee_name

    @admin.display(description="What it gives")
    def what(self, grant):
        return "; ".join(grant.parts())

    def confirm_service(self, pk, user):
        return access_grants.confirm(pk, user=user)

    def reject_service(self, pk, user, reason):
        return access_grants.reject(pk, user=user, reason=reason)

    def why_not_confirmer(self, grant, user):
        return access_grants.why_not_confirmer(grant, user)
