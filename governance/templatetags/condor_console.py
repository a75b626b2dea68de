"""The governance console's admin index: links to the simulator and the dashboard, for staff who may read them."""

from django import template

from core import admin_display
from governance.admin_dashboard import dashboard

register = template.Library()


@register.inclusion_tag("admin/governance/dashboard.html", takes_context=True)
def condor_console(context):
    user = context["request"].user
    return {
        "can_simulate": user.has_perm("registry.view_tooldescriptor"),
        "can_review_changes": user.has_perm("registry.view_toolchange"),
        "board": dashboard() if user.has_perm("approvals.view_approval") else None,
    }


@register.filter
def duration(delta):
    return admin_display.duration(delta)
