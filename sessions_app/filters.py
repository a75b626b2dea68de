"""Filters of the session list. A value a filter cannot read is a 400, never silently ignored."""

import django_filters

from sessions_app.models import Session


class SessionFilter(django_filters.FilterSet):
    # Strict on purpose: django-filter's boolean widget reads `tainted=yes` as
    # "no filter", which would hand tainted sessions to a client asking for clean ones.
    tainted = django_filters.TypedChoiceFilter(
        choices=[("true", "true"), ("false", "false")], coerce=lambda value: value == "true"
    )

    class Meta:
        model = Session
        fields = ["patient_ref", "tainted", "autonomy", "age_band"]
