from django.contrib import admin

from condor.readonly_admin import ReadOnlyModelAdmin
from sessions_app.models import Session


@admin.register(Session)
class SessionAdmin(ReadOnlyModelAdmin):
    list_display = ("id", "title", "patient_ref", "client", "autonomy", "age_band", "consent", "tainted",
                    "created_at")
    list_filter = ("tainted", "autonomy", "age_band", "consent", "client")
    search_fields = ("title", "patient_ref", "id__exact")
    list_select_related = ("client",)
    date_hierarchy = "created_at"
