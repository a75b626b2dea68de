"""Quick rejection reasons in the console: governance edits them, compliance reads them; every save and
delete leaves a `quick_reason` audit row with the reason before and after (admin_audited.py)."""

from django.contrib import admin

from approvals.models import QuickReason
from audit import trail as audit
from governance.admin_audited import AuditedChangesAdmin


@admin.register(QuickReason)
class QuickReasonAdmin(AuditedChangesAdmin, admin.ModelAdmin):
    audit_kind, audit_id_key = audit.Kind.QUICK_REASON, "quick_reason_id"
    list_display = ("text", "position", "active", "updated_at")
    list_filter = ("active",)
    search_fields = ("text",)
    fields = ("text", "position", "active")

    def audit_snapshot(self, obj) -> dict:
        return obj.snapshot()
