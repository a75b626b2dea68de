"""The governance console: the tool registry (editable, audited) and read-only records for compliance."""

from django.contrib import admin
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from approvals import registry
from approvals.display import RevealedFieldsMixin
from approvals.models import ApiClient, ApiClientKey, Approval, AuditEvent, ToolCall, ToolDescriptor
from condor.readonly_admin import ReadOnlyModelAdmin


@admin.register(ToolDescriptor)
class ToolDescriptorAdmin(admin.ModelAdmin):
    list_display = ("name", "policy_class", "hitl_tier", "trust", "allowed_hosts", "updated_at")
    list_filter = ("policy_class", "hitl_tier", "trust")
    search_fields = ("name", "description")
    fields = ("name", "description", "policy_class", "hitl_tier", "trust", "allowed_hosts", "metadata")

    def get_readonly_fields(self, request, obj=None):
        # The name is the identity register() updates by; a new name is a new tool.
        return ("name",) if obj is not None else ()

    def has_delete_permission(self, request, obj=None):
        # The registry has one audited write path, and it has no delete.
        return False

    def save_model(self, request, obj, form, change):
        descriptor, _ = registry.register(obj.name, actor_user=request.user, **registry.snapshot(obj))
        obj.pk, obj.created_at, obj.updated_at = descriptor.pk, descriptor.created_at, descriptor.updated_at


class ApiClientKeyInline(admin.TabularInline):
    model = ApiClientKey
    fields = ("prefix", "name", "created", "expiry_date", "revoked")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # keys are issued from the API key admin, which shows the new key once


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    list_display = ("name", "can_park", "created_at")
    list_filter = ("can_park",)
    search_fields = ("name",)
    inlines = [ApiClientKeyInline]


# The library's own key model authenticates nothing in Condor (ApiClientKey does): hide it
# so nobody issues a key that looks valid and is not.
if admin.site.is_registered(APIKey):
    admin.site.unregister(APIKey)


@admin.register(ApiClientKey)
class ApiClientKeyAdmin(APIKeyModelAdmin):
    """The library's pattern: saving a new key shows it once in a message, then only its hash is kept."""

    list_display = (*APIKeyModelAdmin.list_display, "client")
    list_filter = ("client", "revoked", "created")
    search_fields = (*APIKeyModelAdmin.search_fields, "client__name")
    list_select_related = ("client",)


@admin.register(Approval)
class ApprovalAdmin(RevealedFieldsMixin, ReadOnlyModelAdmin):
    revealed = ("tool", "op", "tool_call_id", "step_id", "message", "args", "approved_args", "resume_schema",
                "resume_data", "decision_reason")
    list_display = ("tool", "op", "status", "reason_code", "rule_id", "hitl_tier", "decided_by",
                    "requested_at", "decided_at", "expires_at")
    list_filter = ("status", "reason_code", "hitl_tier", "rule_id")
    search_fields = ("tool", "tool_call_id", "step_id", "rule_id", "id__exact", "run__id__exact",
                     "session__id__exact")
    list_select_related = ("decided_by",)
    date_hierarchy = "requested_at"


@admin.register(ToolCall)
class ToolCallAdmin(RevealedFieldsMixin, ReadOnlyModelAdmin):
    revealed = ("tool_call_id", "tool", "op", "step_id", "args", "metadata", "output", "entities", "cards")
    list_display = ("tool_call_id", "tool", "op", "decision", "rule_id", "is_error", "untrusted_result",
                    "created_at", "reported_at")
    list_filter = ("decision", "is_error", "untrusted_tool", "untrusted_result")
    search_fields = ("tool", "tool_call_id", "step_id", "rule_id", "run__id__exact")
    date_hierarchy = "created_at"


@admin.register(AuditEvent)
class AuditEventAdmin(RevealedFieldsMixin, ReadOnlyModelAdmin):
    """Append-only: nobody deletes an audit row, here or in the database (trigger)."""

    revealed = ("tool", "data")

    list_display = ("id", "at", "kind", "actor", "tool", "decision", "rule_id", "run_id")
    list_filter = ("kind", "decision", "rule_id")
    search_fields = ("actor", "tool", "rule_id", "run_id__exact", "approval_id__exact", "session_id__exact")
    date_hierarchy = "at"
