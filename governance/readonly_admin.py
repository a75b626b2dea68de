"""Admin base for records that only services write: visible to staff with view rights, never edited.

Their lists export as CSV through the one exporter (governance/csv_export.py: audited,
spreadsheet-safe, streamed), and their text is shown revealed (core/revealed_admin.py).
"""

from django.contrib import admin

from core.revealed_admin import RevealedTextMixin
from governance import csv_export


class ReadOnlyModelAdmin(RevealedTextMixin, admin.ModelAdmin):
    """Runs, approvals, sessions and audit rows change only through their services."""

    actions = ["export_csv"]
    export_columns: list[csv_export.Column] | None = None  # None: every concrete field

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Export selected rows as CSV", permissions=["view"])
    def export_csv(self, request, queryset):
        return csv_export.export(
            request, queryset, details=csv_export.selection(request, self.model), columns=self.export_columns
        )
