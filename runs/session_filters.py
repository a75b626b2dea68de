"""Filters of the session list. A value a filter cannot read is a 400, never silently ignored."""

import django_filters

from sessions_app import extensions
from sessions_app.models import Session

# `run_state=none`: sessions that never opened a run.
NO_RUN = "none"


class RunStateChoices:
    """The run states, read when iterated: they are the runs app's (sessions_app/extensions.py).

    Iterated per request and by the schema, both after the apps are ready; not a
    callable, which drf-spectacular would not call, leaving the parameter without its enum.
    """

    def __iter__(self):
        return iter([(state, state) for state in [*extensions.run_states(), NO_RUN]])


class SessionFilter(django_filters.FilterSet):
    # Strict on purpose: django-filter's boolean widget reads `tainted=yes` as
    # "no filter", which would hand tainted sessions to a client asking for clean ones.
    tainted = django_filters.TypedChoiceFilter(
        choices=[("true", "true"), ("false", "false")], coerce=lambda value: value == "true"
    )
    q = django_filters.CharFilter(field_name="title", lookup_expr="icontains", label="Title contains")
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    run_state = django_filters.ChoiceFilter(choices=RunStateChoices(), method="filter_run_state",
                                            label="State of the session's latest run")

    class Meta:
        model = Session
        fields = ["patient_ref", "care_unit", "tainted", "autonomy", "age_band"]

    def filter_run_state(self, queryset, name, value):
        if value == NO_RUN:
            return extensions.without_runs(queryset)
        return extensions.latest_run_in(queryset, value)
