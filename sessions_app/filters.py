"""Filters of the session list. A value a filter cannot read is a 400, never silently ignored."""

import django_filters
from django.db.models import Exists, OuterRef, Subquery

from runs.states import RunState
from sessions_app.models import Session

# `run_state=none`: sessions that never opened a run.
NO_RUN = "none"
RUN_STATE_CHOICES = [(state.value, state.value) for state in RunState] + [(NO_RUN, NO_RUN)]


class SessionFilter(django_filters.FilterSet):
    # Strict on purpose: django-filter's boolean widget reads `tainted=yes` as
    # "no filter", which would hand tainted sessions to a client asking for clean ones.
    tainted = django_filters.TypedChoiceFilter(
        choices=[("true", "true"), ("false", "false")], coerce=lambda value: value == "true"
    )
    q = django_filters.CharFilter(field_name="title", lookup_expr="icontains", label="Title contains")
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    run_state = django_filters.ChoiceFilter(choices=RUN_STATE_CHOICES, method="filter_run_state",
                                            label="State of the session's latest run")

    class Meta:
        model = Session
        fields = ["patient_ref", "care_unit", "tainted", "autonomy", "age_band"]

    def filter_run_state(self, queryset, name, value):
        from runs.models import Run

        runs = Run.objects.filter(session=OuterRef("pk"))
        if value == NO_RUN:
            return queryset.filter(~Exists(runs))
        latest = runs.order_by("-created_at").values("state")[:1]
        return queryset.annotate(latest_run_state=Subquery(latest)).filter(latest_run_state=value)
