"""The audit log in the admin: compliance reads, filters, searches, exports and verifies; nobody edits.

Built for a log of millions of rows: the changelist never counts the whole table
(an exact count up to COUNT_THRESHOLD rows, the planner's estimate past it, shown
as "many"), its filters offer fixed choices (audit_filters.py), the search matches
indexed columns exactly and an approval's arguments through the approvals table
(audit_search.py), and the CSV export streams the filtered set.
"""

import json

from django.contrib import admin, messages
from django.contrib.admin.views.main import PAGE_VAR
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import OuterRef, Subquery
from django.http import HttpResponseBadRequest, HttpResponseNotAllowed
from django.urls import path, reverse
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join

from approvals.models import Approval
from audit import chain as audit_chain
from audit import trail as audit
from core import admin_display as show
from core.admin_search import SearchTooLong, search_words
from core.display import HiddenCharactersWarningMixin, reveal
from governance import audit_search, csv_export
from governance.audit_filters import (
    ActorFilter,
    DateRangeFilter,
    DecisionFilter,
    PatientFilter,
    RuleFilter,
    ToolFilter,
)
from governance.readonly_admin import ReadOnlyModelAdmin

COUNT_THRESHOLD = 10_000


def planner_estimate(queryset) -> int:
    """PostgreSQL's own row estimate for `queryset` (no scan); an exact count elsewhere."""
    connection = connections[queryset.db]
    if connection.vendor != "postgresql":
        return queryset.count()
    sql, params = queryset.order_by().query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"])


class EstimatedCountPaginator(Paginator):
    """Counts exactly up to COUNT_THRESHOLD (a bounded subquery), estimates past it."""

    estimated = False

    @cached_property
    def count(self) -> int:
        bounded = self.object_list.order_by()[: COUNT_THRESHOLD + 1].count()
        if bounded <= COUNT_THRESHOLD:
            return bounded
        self.estimated = True
        return max(planner_estimate(self.object_list), bounded)


def _when(at) -> str:
    return timezone.localtime(at).strftime("%Y-%m-%d %H:%M:%S %Z")


class AuditEventAdmin(HiddenCharactersWarningMixin, ReadOnlyModelAdmin):
    revealed = ("tool", "data")

    class Media:
        css = {"all": ("governance/console.css",)}  # no inline style: the pages run under a strict CSP

    """Append-only: nobody deletes an audit row, here or in the database (trigger and grants)."""

    list_display = (
        "id",
        "when",
        "kind",
        "actor",
        "patient_ref",
        "tool",
        "op",
        "approval_args",
        "decision",
        "rule_id",
        "links",
    )
    list_display_links = ("id",)
    list_filter = ("kind", DecisionFilter, RuleFilter, ToolFilter, ActorFilter, PatientFilter, DateRangeFilter)
    # Only id and time sort: each is an index; any other column would sort the whole table.
    sortable_by = ("id", "when")
    search_fields = ("patient_ref",)  # shows the box; get_search_results decides what matches
    search_help_text = (
        "Each word must match exactly a patient ref (MRN-30001), a run, approval or session id (as "
        "shown, with dashes), an actor (user:gina, client:ward-agent, sweep), a tool, a rule id or a "
        'row id; or be found in the arguments of the row\'s approval (amoxicillin, "500 mg").'
    )
    paginator = EstimatedCountPaginator
    show_full_result_count = False
    list_per_page = 100
    actions = ["export_csv", "verify_chains"]
    export_columns = [
        csv_export.Column("details" if name == "data" else name, name)
        for name in (
            "id",
            "at",
            "kind",
            "actor",
            "actor_user_id",
            "actor_client_id",
            "patient_ref",
            "session_id",
            "run_id",
            "approval_id",
            "tool",
            "op",
            "decision",
            "rule_id",
            "data",
            "chain",
            "seq",
            "prev_hash",
            "hash",
        )
    ]
    fields = (
        "id",
        "when",
        "kind",
        "actor",
        "actor_user",
        "actor_client",
        "patient_ref",
        "tool",
        "op",
        "decision",
        "rule_id",
        "links",
        "related_rows",
        "details",
        "approval_args_pretty",
        "chain",
        "seq",
        "prev_hash",
        "hash",
    )
    readonly_fields = fields

    # --- the approval's arguments, for readers of approvals -------------------------------------

    @staticmethod
    def reads_approvals(request) -> bool:
        return request.user.has_perm("approvals.view_approval")

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not self.reads_approvals(request):
            return queryset
        # One primary-key lookup per row shown, in the page's own query. The CSV export (values_list of the
        # log's columns) never selects it, and PostgreSQL drops it from the bounded count's subquery unread.
        return queryset.annotate(
            approval_arguments=Subquery(
                Approval.objects.filter(pk=OuterRef("approval_id")).order_by().values("args")[:1]
            )
        )

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        return (
            shown
            if self.reads_approvals(request)
            else [column for column in shown if getattr(column, "__name__", column) != "approval_args"]
        )

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return (
            fields
            if self.reads_approvals(request)
            else [field for field in fields if getattr(field, "__name__", field) != "approval_args_pretty"]
        )

    @admin.display(description="arguments asked")
    def approval_args(self, event):
        if event.approval_id is None:
            return "—"
        return show.args_summary(getattr(event, "approval_arguments", None), shown=(event.patient_ref,))

    @admin.display(description="the approval's arguments (as the agent asked)")
    def approval_args_pretty(self, event):
        return show.pretty_json(getattr(event, "approval_arguments", None))

    # --- display -------------------------------------------------------------------------------

    @admin.display(description="time", ordering="at")
    def when(self, event) -> str:
        return _when(event.at)

    @cached_property
    def _change_urls(self) -> dict[str, str]:
        # reverse() once per page kind, not three times per row: a page has 100 rows.
        placeholder = "00000000-0000-0000-0000-000000000000"
        return {
            label: reverse(name, args=[placeholder]).replace(placeholder, "{}")
            for label, name in (
                ("approval", "admin:approvals_approval_change"),
                ("run", "admin:runs_run_change"),
                ("session", "admin:sessions_app_session_change"),
            )
        }

    @admin.display(description="links")
    def links(self, event):
        urls = self._change_urls
        targets = (("approval", event.approval_id), ("run", event.run_id), ("session", event.session_id))
        return format_html_join(
            " · ", '<a href="{}">{}</a>', ((urls[label].format(pk), label) for label, pk in targets if pk)
        )

    @admin.display(description="audit rows of the same")
    def related_rows(self, event):
        changelist = reverse("admin:audit_auditevent_changelist")
        targets = [
            ("approval", "approval_id", event.approval_id),
            ("run", "run_id", event.run_id),
            ("session", "session_id", event.session_id),
        ]
        return format_html_join(
            " · ", '<a href="{}?{}={}">{}</a>', ((changelist, field, pk, label) for label, field, pk in targets if pk)
        )

    @admin.display(description="details")
    def details(self, event):
        return format_html(
            '<pre class="condor-details">{}</pre>',
            reveal(json.dumps(event.data, indent=2, ensure_ascii=False, sort_keys=True)),
        )

    # --- search: exact on indexed columns, and through the approvals' arguments ----------------

    def get_search_results(self, request, queryset, search_term):
        try:
            words = search_words(search_term)
        except SearchTooLong as error:
            self.message_user(request, str(error), messages.ERROR)
            return queryset.none(), False
        if not words:
            return queryset, False
        found, cut = audit_search.search(queryset, words, through_approvals=self.reads_approvals(request))
        if cut:
            self.message_user(
                request,
                f"More than {audit_search.APPROVALS_AT_MOST:,} approvals match: the rows of "
                f"the newest {audit_search.APPROVALS_AT_MOST:,} are listed. Add a word (a patient ref, "
                "a dose) to narrow the search.",
                messages.WARNING,
            )
        return found, False

    # --- export: the filtered set, streamed, audited -------------------------------------------

    def changelist_view(self, request, extra_context=None):
        query = request.GET.copy()
        query.pop(PAGE_VAR, None)
        export_query = ("?" + query.urlencode()) if query else ""
        if not self.has_view_permission(request):
            export_query = None
        return super().changelist_view(request, {**(extra_context or {}), "export_query": export_query})

    def get_urls(self):
        return [
            path("export/", self.admin_site.admin_view(self.export_view), name="audit_auditevent_export"),
            *super().get_urls(),
        ]

    def export_view(self, request):
        """POST /admin/audit/auditevent/export/?<the changelist's filters>: every matching row."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        request.GET = request.GET.copy()
        request.GET.pop(PAGE_VAR, None)
        try:
            changelist = self.get_changelist_instance(request)
        except admin.options.IncorrectLookupParameters as error:
            return HttpResponseBadRequest(f"Bad filter: {error}")
        return csv_export.export(
            request,
            changelist.queryset,
            columns=self.export_columns,
            details={"scope": "filtered", "filter": csv_export.changelist_filter(request)},
        )

    # --- verification ---------------------------------------------------------------------------

    @admin.action(description="Verify the hash chains of the selected rows", permissions=["view"])
    def verify_chains(self, request, queryset):
        chains = sorted(set(queryset.order_by().values_list("chain", flat=True).distinct()))
        report = audit_chain.verify(chains)
        audit.record(
            audit.Kind.VERIFY,
            actor_user=request.user,
            decision="intact" if report.intact else "broken",
            data={**audit_chain.report_details(report), "chains_asked": chains[:100]},
        )
        if report.intact:
            self.message_user(
                request, f"Intact: {report.rows} rows in {report.chains} chain(s) verified.", messages.SUCCESS
            )
        else:
            self.message_user(request, f"BROKEN: {report.broken}", messages.ERROR)
