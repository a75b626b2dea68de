"""Review teams in the admin: governance edits them, compliance reads them; every change is audited.

A team's members and care units decide which reviewers see which cards
(approvals/visibility.py), so each save and delete leaves a `review_team` audit row
with the team before and after, in the admin's own transaction.
"""

from django.contrib import admin

from approvals import audit
from approvals.models import ReviewTeam


def team_snapshot(team: ReviewTeam | None) -> dict | None:
    return team.snapshot() if team is not None and team.pk is not None else None


@admin.register(ReviewTeam)
class ReviewTeamAdmin(admin.ModelAdmin):
    list_display = ("name", "care_units", "is_default", "member_count", "updated_at")
    list_filter = ("is_default",)
    search_fields = ("name", "members__username")
    fields = ("name", "care_units", "is_default", "members")
    filter_horizontal = ("members",)

    @admin.display(description="members")
    def member_count(self, team) -> int:
        return team.members.count()

    def save_model(self, request, obj, form, change):
        # Read before the form's values are written: the audit row shows what changed.
        request._team_before = team_snapshot(ReviewTeam.objects.filter(pk=obj.pk).first()) if change else None
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)  # members are saved here
        before, after = request._team_before, team_snapshot(form.instance)
        if before != after:
            audit.record(audit.Kind.REVIEW_TEAM, actor_user=request.user, decision="updated" if change else "created",
                         data={"team_id": form.instance.pk, "before": before, "after": after})

    def delete_model(self, request, obj):
        team_id, before = obj.pk, team_snapshot(obj)
        super().delete_model(request, obj)
        audit.record(audit.Kind.REVIEW_TEAM, actor_user=request.user, decision="deleted",
                     data={"team_id": team_id, "before": before, "after": None})

    def delete_queryset(self, request, queryset):
        for team in queryset:  # one audit row per team, not a silent bulk delete
            self.delete_model(request, team)
