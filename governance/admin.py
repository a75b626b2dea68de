"""The governance console: API clients and keys, the audit log; see admin_registry and admin_approvals."""

from django.contrib import admin
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from agents.models import ApiClient, ApiClientKey

# The console's pages live in small modules; importing them registers them.
from audit import trail as audit
from audit.models import AuditEvent
from governance import (  # noqa: F401
    admin_accounts,
    admin_approvals,
    admin_quick_reasons,
    admin_registry,
    admin_runs,
    admin_sessions,
    admin_teams,
)
from governance.admin_audited import AuditedChangesAdmin
from governance.audit_admin import AuditEventAdmin


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
class ApiClientAdmin(AuditedChangesAdmin, admin.ModelAdmin):
    # Which runtimes may call the API, and which may park runs: every change is audited.
    audit_kind, audit_id_key = audit.Kind.API_CLIENT, "client_id"
    list_display = ("name", "can_park", "created_at")
    list_filter = ("can_park",)
    search_fields = ("name",)
    inlines = [ApiClientKeyInline]

    def audit_snapshot(self, client: ApiClient) -> dict:
        return client.snapshot()


# The library's own key model authenticates nothing in Condor (ApiClientKey does): hide it
# so nobody issues a key that looks valid and is not.
if admin.site.is_registered(APIKey):
    admin.site.unregister(APIKey)


@admin.register(ApiClientKey)
class ApiClientKeyAdmin(AuditedChangesAdmin, APIKeyModelAdmin):
    """The library's pattern: saving a new key shows it once in a message, then only its hash is kept.

    Issuing, renaming, expiring and revoking a key are audited (the prefix names the key; the
    key itself and its hash never enter the log).
    """

    audit_kind, audit_id_key = audit.Kind.API_CLIENT, "key_prefix"

    list_display = (*APIKeyModelAdmin.list_display, "client")
    list_filter = ("client", "revoked", "created")
    search_fields = (*APIKeyModelAdmin.search_fields, "client__name")
    list_select_related = ("client",)

    def audit_object_id(self, key: ApiClientKey) -> str:
        return key.prefix  # the library's primary key is "prefix.hash": the hash stays out of the log

    def audit_snapshot(self, key: ApiClientKey) -> dict:
        return key.snapshot()


# The audit log's page lives in governance/audit_admin.py (filters, export, verification).
admin.site.register(AuditEvent, AuditEventAdmin)
