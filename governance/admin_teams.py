"""Review teams in the admin: governance edits them, compliance reads them; every change is audited.

A team's members and care units decide which reviewers see which cards
(approvals/visibility.py), so each save and delete leaves a `review_team` audit row
with the team before and after, in the admin's own transaction.
"""

from django.contrib import admin
from django.contrib.admin.widgets import FilteredSelectMultiple

from approvals.models import ReviewTeam
from audit import trail as audit
from core.json_form_field import STRICT_JSON_FIELDS
from governance.admin_audited import AuditedChangesAdmin


class NamedFilteredSelectMultiple(FilteredSelectMultiple):
    """Django's two-box picker, its filter boxes named for assistive technology (select_filter_names.js)."""

    class Media:
        # Named after SelectFilter2.js, so the merged media keep this script after it.
        js = ["admin/js/SelectFilter2.js", "governance/select_filter_names.js"]


@admin.register(ReviewTeam)
class ReviewTeamAdmin(AuditedChangesAdmin, admin.ModelAdmin):
    audit_kind, audit_id_key = audit.Kind.REVIEW_TEAM, "team_id"
    list_display = ("name", "care_units", "is_default", "member_count", "updated_at")
    list_filter = ("is_default",)
    search_fields = ("name", "members__username")
    fields = ("name", "care_units", "is_default", "members")
    formfield_overrides = STRICT_JSON_FIELDS
    filter_horizontal = ("members",)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name in self.filter_horizontal:
            kwargs["widget"] = NamedFilteredSelectMultiple(db_field.verbose_name, is_stacked=False)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    @admin.display(description="members")
    def member_count(self, team) -> int:
        return team.members.count()

    def audit_snapshot(self, team: ReviewTeam) -> dict:
        return team.snapshot()
