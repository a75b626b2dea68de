"""Approvals and tool calls in the admin: who allowed what, for which patient, when, and what happened next.

Read-only for everyone (services write these rows). Each page links to the run, the
session and their audit rows, and never to a page compliance may not open (no link to
the user admin: people are shown by name).
"""

from django.contrib import admin

from approvals import bound_context
from approvals.models import Approval, ToolCall
from core import admin_display as show
from core.admin_search import UUIDSearchMixin
from core.display import HiddenCharactersWarningMixin
from governance.readonly_admin import ReadOnlyModelAdmin


@admin.register(Approval)
class ApprovalAdmin(HiddenCharactersWarningMixin, UUIDSearchMixin, ReadOnlyModelAdmin):
    revealed = ("tool", "op", "message", "args", "approved_args", "resume_schema", "resume_data", "decision_reason")
    list_display = (
        "id",
        "tool",
        "op",
        "patient_ref",
        "args_summary",
        "status",
        "rule_id",
        "hitl_tier",
        "decided_by_name",
        "requested_at",
        "time_to_decision",
        "expires_at",
    )
    list_filter = ("status", "reason_code", "hitl_tier", "rule_id", "tool")
    search_fields = ("session__patient_ref", "tool", "tool_call_id", "step_id", "rule_id")
    json_search_fields = ("args",)  # a drug, a dose, as the agent asked (the list shows them so)
    search_help_text = (
        "Each word must be found in the patient ref, tool, call, step or rule id, or in the "
        'arguments (amoxicillin, "500 mg"); an approval, run or session id as shown.'
    )
    uuid_search_fields = ("id", "run__id", "session__id")
    list_select_related = ("session", "decided_by")
    date_hierarchy = "requested_at"
    ordering = ("-requested_at",)
    fieldsets = (
        (
            "The call",
            {
                "fields": (
                    "id",
                    "tool",
                    "op",
                    "patient_ref",
                    "bound_context_pretty",
                    "status",
                    "reason_code",
                    "rule_id",
                    "explanation",
                    "hitl_tier",
                    "message",
                    "tool_call_id",
                    "step_id",
                )
            },
        ),
        ("Arguments", {"fields": ("args_pretty", "reviewer_edit", "resume_schema_pretty", "resume_data_pretty")}),
        (
            "Decision",
            {
                "fields": (
                    "decided_by_name",
                    "decision_reason",
                    "requested_at",
                    "decided_at",
                    "time_to_decision",
                    "expires_at",
                    "consumed_at",
                )
            },
        ),
        ("Related", {"fields": ("run_link", "the_call", "session_link", "audit_rows")}),
    )
    readonly_fields = [field for _, options in fieldsets for field in options["fields"]]

    # The patient the card showed and the approval is bound to (approvals/bound_context.py).
    @admin.display(description="Patient", ordering="bound_context__patient_ref")
    def patient_ref(self, approval):
        return bound_context.bound(approval)["patient_ref"] or "—"

    bound_context_pretty = show.json_field("bound_context", "Patient context (as the card showed it)")

    @admin.display(description="Arguments")
    def args_summary(self, approval):
        return show.args_summary(approval.args, shown=(approval.session.patient_ref,))

    @admin.display(description="Decided by", ordering="decided_by__username")
    def decided_by_name(self, approval):
        return show.person(approval.decided_by)

    @admin.display(description="Time to decision")
    def time_to_decision(self, approval):
        # An expiry stamps decided_at too, but nobody decided: no time to decision.
        if approval.decided_by_id is None or approval.decided_at is None:
            return "—"
        return show.duration(approval.decided_at - approval.requested_at)

    args_pretty = show.json_field("args", "Arguments (as the agent asked)")

    @admin.display(description="Reviewer's edit")
    def reviewer_edit(self, approval):
        return show.args_diff(approval.args, approval.approved_args)

    resume_schema_pretty = show.json_field("resume_schema", "Resume schema")
    resume_data_pretty = show.json_field("resume_data", "Resume data")

    @admin.display(description="Run")
    def run_link(self, approval):
        return show.change_link(approval.run, str(approval.run_id))

    @admin.display(description="What the agent did")
    def the_call(self, approval):
        call = ToolCall.objects.filter(run_id=approval.run_id, tool_call_id=approval.tool_call_id).first()
        return show.call_outcome(call)

    @admin.display(description="Session")
    def session_link(self, approval):
        return show.change_link(approval.session)

    @admin.display(description="Audit")
    def audit_rows(self, approval):
        return show.audit_links(approval_id=approval.pk, run_id=approval.run_id, session_id=approval.session_id)


@admin.register(ToolCall)
class ToolCallAdmin(HiddenCharactersWarningMixin, UUIDSearchMixin, ReadOnlyModelAdmin):
    revealed = ("tool", "op", "args", "metadata", "output", "entities", "cards")
    list_display = (
        "tool_call_id",
        "tool",
        "op",
        "patient_ref",
        "args_summary",
        "decision",
        "rule_id",
        "is_error",
        "untrusted_result",
        "created_at",
        "reported_at",
    )
    list_filter = ("decision", "is_error", "untrusted_tool", "untrusted_result")
    search_fields = ("run__session__patient_ref", "tool", "tool_call_id", "step_id", "rule_id")
    json_search_fields = ("args",)
    search_help_text = (
        "Each word must be found in the patient ref, tool, call, step or rule id, or in the "
        'arguments (amoxicillin, "500 mg"); a run or session id as shown.'
    )
    uuid_search_fields = ("run__id", "run__session__id")
    list_select_related = ("run__session",)
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    fieldsets = (
        (
            "The call",
            {
                "fields": (
                    "tool_call_id",
                    "step_id",
                    "tool",
                    "op",
                    "patient_ref",
                    "decision",
                    "rule_id",
                    "untrusted_tool",
                    "created_at",
                )
            },
        ),
        ("Arguments", {"fields": ("args_pretty", "metadata_pretty")}),
        (
            "Result",
            {
                "fields": (
                    "reported_at",
                    "is_error",
                    "untrusted_result",
                    "output_pretty",
                    "entities_pretty",
                    "cards_pretty",
                )
            },
        ),
        ("Related", {"fields": ("run_link", "session_link", "approvals", "audit_rows")}),
    )
    readonly_fields = [field for _, options in fieldsets for field in options["fields"]]

    @admin.display(description="Patient", ordering="run__session__patient_ref")
    def patient_ref(self, call):
        return call.run.session.patient_ref or "—"

    @admin.display(description="Arguments")
    def args_summary(self, call):
        return show.args_summary(call.args, shown=(call.run.session.patient_ref,))

    args_pretty = show.json_field("args", "Arguments")
    metadata_pretty = show.json_field("metadata", "Client metadata")

    output_pretty = show.json_field("output", "Output")
    entities_pretty = show.json_field("entities", "Entities")
    cards_pretty = show.json_field("cards", "Cards")

    @admin.display(description="Run")
    def run_link(self, call):
        return show.change_link(call.run, str(call.run_id))

    @admin.display(description="Session")
    def session_link(self, call):
        return show.change_link(call.run.session)

    @admin.display(description="Approvals")
    def approvals(self, call):
        return show.changelist_link(
            "approvals_approval",
            "approvals of this call",
            run__id__exact=str(call.run_id),
            tool_call_id=call.tool_call_id,
        )

    @admin.display(description="Audit")
    def audit_rows(self, call):
        return show.audit_links(run_id=call.run_id)
