from django.contrib import admin
from django.utils.html import format_html

from core import admin_display as show
from core.admin_search import UUIDSearchMixin
from core.display import HiddenCharactersWarningMixin
from governance.readonly_admin import ReadOnlyModelAdmin
from governance.session_panels import SessionPanels
from sessions_app.models import Session


@admin.register(Session)
class SessionAdmin(HiddenCharactersWarningMixin, SessionPanels, UUIDSearchMixin, ReadOnlyModelAdmin):
    revealed = ("title", "patient_ref", "care_unit")
    list_display = (
        "id",
        "title",
        "patient_ref",
        "care_unit",
        "client",
        "autonomy",
        "age_band",
        "consent",
        "tainted",
        "created_at",
    )
    list_filter = ("tainted", "autonomy", "age_band", "consent", "client")
    search_fields = ("title", "patient_ref")
    uuid_search_fields = ("id",)
    list_select_related = ("client",)
    date_hierarchy = "created_at"
    fieldsets = (
        (
            "The session",
            {
                "fields": (
                    "id",
                    "title",
                    "patient_ref",
                    "care_unit",
                    "client",
                    "taint",
                    "autonomy",
                    "age_band",
                    "consent",
                    "created_at",
                    "updated_at",
                    "deleted_at",
                )
            },
        ),
        ("Related", {"fields": ("related",)}),
        ("Conversation", {"fields": ("history_panel", "pinned_panel", "entities_panel", "runs_panel")}),
    )
    readonly_fields = [field for _, options in fieldsets for field in options["fields"]]

    @admin.display(description="Tainted")
    def taint(self, session):
        if session.tainted:
            return format_html(
                "<strong>{}</strong>",
                "Yes: untrusted content entered this session; "
                "sending data out or running code now needs a clinician's approval.",
            )
        return "No"

    @admin.display(description="Links")
    def related(self, session):
        return format_html(
            "{}<br>{}<br>{}",
            show.changelist_link("runs_run", "runs of this session", session__id__exact=str(session.pk)),
            show.changelist_link("approvals_approval", "approvals of this session", session__id__exact=str(session.pk)),
            show.audit_links(session_id=session.pk),
        )
