from django.contrib import admin
from django.utils.html import format_html, format_html_join

from core import admin_display as show
from core.admin_search import UUIDSearchMixin
from core.display import HiddenCharactersWarningMixin
from governance.readonly_admin import ReadOnlyModelAdmin
from runs.models import Run, RunEvent

TIMELINE_LIMIT = 500


@admin.register(Run)
class RunAdmin(HiddenCharactersWarningMixin, UUIDSearchMixin, ReadOnlyModelAdmin):
    revealed = ("flow_key", "engine", "summary", "usage")
    list_display = (
        "id",
        "session",
        "patient_ref",
        "state",
        "terminal_reason",
        "autonomy",
        "created_at",
        "last_activity_at",
        "closed_at",
    )
    list_filter = ("state", "terminal_reason", "autonomy")
    search_fields = ("session__patient_ref", "flow_key", "engine")
    uuid_search_fields = ("id", "session__id")
    list_select_related = ("session",)
    date_hierarchy = "created_at"
    fieldsets = (
        (
            "The run",
            {
                "fields": (
                    "id",
                    "session_link",
                    "patient_ref",
                    "state",
                    "terminal_reason",
                    "autonomy",
                    "flow_key",
                    "engine",
                    "summary",
                    "usage_pretty",
                )
            },
        ),
        ("Times", {"fields": ("created_at", "last_activity_at", "suspended_at", "closed_at")}),
        ("Timeline", {"fields": ("timeline",)}),
        ("Related", {"fields": ("related",)}),
    )
    readonly_fields = [field for _, options in fieldsets for field in options["fields"]]

    @admin.display(description="Patient", ordering="session__patient_ref")
    def patient_ref(self, run):
        return run.session.patient_ref or "—"

    @admin.display(description="Session")
    def session_link(self, run):
        return show.change_link(run.session)

    usage_pretty = show.json_field("usage", "Usage")

    @admin.display(description="Event timeline")
    def timeline(self, run):
        """The run's outbox events in order: what happened, when, and when it was pushed."""
        events = list(run.events.order_by("id")[: TIMELINE_LIMIT + 1])
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    show.change_link(event, str(event.pk)),
                    show.when(event.created_at),
                    event.kind,
                    event.step_id or "—",
                    show.when(event.published_at) if event.published_at else "not yet",
                    show.pretty_json(event.data),
                )
                for event in events[:TIMELINE_LIMIT]
            ),
        )
        more = (
            show.changelist_link(
                "runs_runevent", f"all events of this run (over {TIMELINE_LIMIT})", run__id__exact=str(run.pk)
            )
            if len(events) > TIMELINE_LIMIT
            else ""
        )
        return format_html(
            '<table class="condor-timeline"><thead><tr><th>#</th><th>at</th><th>kind</th><th>step</th>'
            "<th>published</th><th>data</th></tr></thead><tbody>{}</tbody></table>{}",
            rows,
            more,
        )

    @admin.display(description="Links")
    def related(self, run):
        return format_html(
            "{}<br>{}<br>{}",
            show.changelist_link("approvals_approval", "approvals of this run", run__id__exact=str(run.pk)),
            show.changelist_link("approvals_toolcall", "tool calls of this run", run__id__exact=str(run.pk)),
            show.audit_links(run_id=run.pk),
        )


@admin.register(RunEvent)
class RunEventAdmin(HiddenCharactersWarningMixin, UUIDSearchMixin, ReadOnlyModelAdmin):
    revealed = ("kind", "step_id", "data")
    list_display = ("id", "run", "kind", "step_id", "created_at", "published_at")
    # "Empty" published_at = not settled yet: the drainer pushes it again, or marks it if nobody listens.
    list_filter = ("kind", ("published_at", admin.EmptyFieldListFilter))
    search_fields = ("kind", "step_id")
    uuid_search_fields = ("run__id",)
    list_select_related = ("run",)
