from django.contrib import admin

from condor.readonly_admin import ReadOnlyModelAdmin
from runs.models import Run, RunEvent


@admin.register(Run)
class RunAdmin(ReadOnlyModelAdmin):
    list_display = ("id", "session", "state", "terminal_reason", "autonomy", "created_at", "last_activity_at",
                    "closed_at")
    list_filter = ("state", "terminal_reason", "autonomy")
    search_fields = ("id__exact", "session__id__exact", "flow_key", "engine")
    list_select_related = ("session",)
    date_hierarchy = "created_at"


@admin.register(RunEvent)
class RunEventAdmin(ReadOnlyModelAdmin):
    list_display = ("id", "run", "kind", "step_id", "created_at", "published_at")
    # "Empty" published_at = not pushed yet: what the drainer will re-publish.
    list_filter = ("kind", ("published_at", admin.EmptyFieldListFilter))
    search_fields = ("kind", "step_id", "run__id__exact")
    list_select_related = ("run",)
