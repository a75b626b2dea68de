"""Filters of the session list. A value a filter cannot read is a 400, never silently ignored."""

import django_filters
from django.db.models import Exists, OuterRef, Subquery

from runs.models import Run
from runs.states import RUN_STATES
from sessions_app.models import Session

# `run_state=none`: sessions that never opened a run.
NO_RUN = "none"


class SessionFilter(django_filters.FilterSet):
    # Strict on purpose: django-filter's boolean widget reads `tainted=yes` as
    # "no filter", which would hand tainted sessions to a client asking for clean ones.
    tainted = django_filters.TypedChoiceFilter(
        choices=[("true", "true"), ("false", "false")], coerce=lambda value: value == "true"
    )
    q = django_filters.CharFilter(field_name="title", lookup_expr="icontains", label="Title contains")
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    run_state = django_filters.ChoiceFilter(
        choices=[(state, state) for state in [*RUN_STATES, NO_RUN]],
        method="filter_run_state",
        label="State of the session's latest run",
    )

    class Meta:
        model = Session
        fields = ["patient_ref", "care_unit", "tainted", "autonomy", "age_band"]

    def filter_run_state(self, queryset, name, value):
        if value == NO_RUN:
            return _without_runs(queryset)
        return _latest_run_in(queryset, value)


def _latest_run_in(sessions, state: str):
    latest = Run.objects.filter(session=OuterRef("pk")).order_by("-created_at").values("state")[:1]
    return sessions.annotate(latest_run_state=Subquery(latest)).filter(latest_run_state=state)


def _without_runs(sessions):
    return sessions.filter(~Exists(Run.objects.filter(session=OuterRef("pk"))))
