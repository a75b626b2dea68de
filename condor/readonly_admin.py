"""Admin base for records that only services write: visible to staff with view rights, never edited."""

import csv

from django.contrib import admin
from django.http import HttpResponse

from condor.revealed_admin import RevealedTextMixin


class ReadOnlyModelAdmin(RevealedTextMixin, admin.ModelAdmin):
    """Runs, approvals, sessions and audit rows change only through their services."""

    actions = ["export_csv"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Export selected rows as CSV", permissions=["view"])
    def export_csv(self, request, queryset):
        fields = [field.name for field in self.model._meta.concrete_fields]
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{self.model._meta.model_name}.csv"'
        writer = csv.writer(response)
        writer.writerow(fields)
        for row in queryset.values_list(*(field.attname for field in self.model._meta.concrete_fields)):
            writer.writerow(row)
        return response
