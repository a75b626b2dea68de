"""The tool registry in the admin: edits go through four eyes, and their impact is shown first.

Saving a descriptor calls registry.changes.submit: an edit that lowers risk
becomes a pending ToolChange (the page then shows it, awaiting a second governance
admin); any other edit applies at once, audited. "Preview the impact" on the form
shows the truth table before and after without saving anything.
"""

import copy

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import flatten_fieldsets, unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.urls import path, reverse

from core import admin_display as show
from core.errors import CondorError
from core.json_form_field import STRICT_JSON_FIELDS
from governance.admin_four_eyes import ProposalAdmin
from governance.admin_simulator import simulator_view
from registry import changes as registry_changes
from registry import descriptors as registry
from registry import simulator
from registry.four_eyes import dependence
from registry.models import ToolChange, ToolChangeStatus, ToolDescriptor


def impact_context(name: str, before: dict | None, after: dict) -> dict:
    """What the impact template needs: the cell-by-cell table and why the edit lowers risk."""
    return {
        "impact": simulator.impact(name, registry_changes.spec_of(name, before), registry_changes.spec_of(name, after)),
        "lowering": registry_changes.lowering_reasons(name, before, after),
        "field_changes": [
            (field, (before or {}).get(field), value)
            for field, value in after.items()
            if before is None or before.get(field) != value
        ],
    }


@admin.register(ToolDescriptor)
class ToolDescriptorAdmin(admin.ModelAdmin):
    list_display = ("name", "policy_class", "hitl_tier", "trust", "allowed_hosts", "updated_at")
    list_filter = ("policy_class", "hitl_tier", "trust")
    search_fields = ("name", "description")
    fields = (
        "name",
        "description",
        "policy_class",
        "hitl_tier",
        "trust",
        "allowed_hosts",
        "metadata",
        "approvals_required",
        "identity_args",
    )
    formfield_overrides = STRICT_JSON_FIELDS

    def get_urls(self):
        return [
            path("simulator/", self.admin_site.admin_view(self.simulator), name="registry_tooldescriptor_simulator"),
            *super().get_urls(),
        ]

    def simulator(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        return simulator_view(self, request)

    def get_readonly_fields(self, request, obj=None):
        # The name is the identity register() updates by; a new name is a new tool.
        return ("name",) if obj is not None else ()

    def has_delete_permission(self, request, obj=None):
        # The registry has one audited write path, and it has no delete.
        return False

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "POST" and "_preview" in request.POST:
            return self._preview(request, object_id, form_url)
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except CondorError as error:  # e.g. another change to this tool is already pending
            self.message_user(request, error.detail, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def save_model(self, request, obj, form, change):
        submitted = registry_changes.submit(obj.name, registry.snapshot(obj), user=request.user)
        request._tool_change = submitted.change
        if submitted.descriptor is not None:
            descriptor = submitted.descriptor
            obj.pk, obj.created_at, obj.updated_at = descriptor.pk, descriptor.created_at, descriptor.updated_at

    # A proposal changed nothing yet: no "changed" history entry, and the page to go to is the proposal.
    def log_addition(self, request, obj, message):
        if getattr(request, "_tool_change", None) is None:
            return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        if getattr(request, "_tool_change", None) is None:
            return super().log_change(request, obj, message)

    def response_add(self, request, obj, post_url_continue=None):
        return self._proposed(request) or super().response_add(request, obj, post_url_continue)

    def response_change(self, request, obj):
        return self._proposed(request) or super().response_change(request, obj)

    def _proposed(self, request):
        change = getattr(request, "_tool_change", None)
        if change is None:
            return None
        self.message_user(
            request,
            f"This change lowers risk ({'; '.join(change.reasons)}). It was saved as "
            "proposal #%d and takes effect when a second governance admin confirms it." % change.pk,
            messages.WARNING,
        )
        return HttpResponseRedirect(reverse("admin:registry_toolchange_change", args=[change.pk]))

    def _preview(self, request, object_id, form_url):
        """The change form again, with the truth table before and after the edit. Saves nothing."""
        obj = self.get_object(request, unquote(object_id)) if object_id else None
        add = obj is None
        if (add and not self.has_add_permission(request)) or (not add and not self.has_change_permission(request, obj)):
            raise PermissionDenied
        fieldsets = self.get_fieldsets(request, obj)
        form_class = self.get_form(request, obj, change=not add, fields=flatten_fieldsets(fieldsets))
        form = form_class(request.POST, instance=copy.copy(obj) if obj is not None else None)
        extra = {}
        if form.is_valid():
            name = obj.name if obj is not None else form.instance.name
            extra = impact_context(
                name, registry.snapshot(obj) if obj is not None else None, registry.snapshot(form.instance)
            )
            extra["preview"] = True
        admin_form = helpers.AdminForm(
            form,
            list(fieldsets),
            self.get_prepopulated_fields(request, obj),
            self.get_readonly_fields(request, obj),
            model_admin=self,
        )
        context = {
            **self.admin_site.each_context(request),
            "title": ("Add %s" if add else "Change %s") % self.opts.verbose_name,
            "subtitle": str(obj) if obj is not None else None,
            "adminform": admin_form,
            "object_id": object_id,
            "original": obj,
            "is_popup": False,
            "to_field": None,
            "media": self.media + admin_form.media,
            "inline_admin_formsets": [],
            "errors": helpers.AdminErrorList(form, []),
            "preserved_filters": self.get_preserved_filters(request),
            **extra,
        }
        return self.render_change_form(request, context, add=add, change=not add, obj=obj, form_url=form_url)


@admin.register(ToolChange)
class ToolChangeAdmin(ProposalAdmin):
    """Pending and decided four-eyes registry changes; confirm and reject are POST buttons on the page."""

    list_display = ("id", "tool", "status", "why", "proposed_by_name", "proposed_at", "decided_by_name", "decided_at")
    list_filter = ("status",)
    search_fields = ("tool",)
    fields = (
        "tool",
        "status",
        "why",
        "proposed_by_name",
        "proposed_at",
        "decided_by_name",
        "decided_at",
        "decision_reason",
        "before_pretty",
        "after_pretty",
    )
    readonly_fields = fields
    confirmed_message = "Confirmed: the change is now in effect."
    rejected_message = "Rejected: the registry is unchanged."

    @admin.display(description="Why it needs four eyes")
    def why(self, change):
        return "; ".join(change.reasons)

    before_pretty = show.json_field("before", "Before")
    after_pretty = show.json_field("after", "After")

    def confirm_service(self, pk, user):
        return registry_changes.confirm(pk, user=user)

    def reject_service(self, pk, user, reason):
        return registry_changes.reject(pk, user=user, reason=reason)

    def why_not_confirmer(self, change, user):
        return dependence(user, change.proposed_by)

    def decision_context(self, request, change):
        context = {
            **super().decision_context(request, change),
            **impact_context(change.tool, change.before, change.after),
        }
        current = ToolDescriptor.objects.filter(name=change.tool).first()
        context["stale"] = (
            change.status == ToolChangeStatus.PENDING
            and (registry.snapshot(current) if current else None) != change.before
        )
        return context
