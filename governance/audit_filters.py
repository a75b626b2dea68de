"""The audit changelist's filters: fixed choices or typed values, never a DISTINCT scan of the log.

Django's default filter for a plain column lists its values with SELECT DISTINCT over
the whole table (seconds on a million rows). Here the choices come from code (kinds,
decisions, rule ids) or from small tables (tools, users, API clients).
"""

from datetime import datetime, time, timedelta

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.auth import get_user_model
from django.utils import timezone

from agents.models import ApiClient
from approvals.gate import CANNOT_PARK, CLARIFICATION_RULE, PRIOR_GRANT
from audit import trail as audit
from registry.models import ToolDescriptor
from registry.policy import RULE_IDS, STATIC_REGISTRY


class _FixedChoices(admin.SimpleListFilter):
    """`?<field>=<value>` with a list of values known without reading the audit table."""

    def queryset(self, request, queryset):
        value = self.value()
        return queryset.filter(**{self.parameter_name: value}) if value else queryset


class DecisionFilter(_FixedChoices):
    title, parameter_name = "decision", "decision"

    def lookups(self, request, model_admin):
        return [(decision, decision) for decision in audit.DECISIONS]


class RuleFilter(_FixedChoices):
    title, parameter_name = "rule", "rule_id"

    def lookups(self, request, model_admin):
        return [(rule, rule) for rule in (*RULE_IDS, PRIOR_GRANT, CANNOT_PARK, CLARIFICATION_RULE)]


class ToolFilter(_FixedChoices):
    title, parameter_name = "tool", "tool"

    def lookups(self, request, model_admin):
        names = set(STATIC_REGISTRY) | set(ToolDescriptor.objects.values_list("name", flat=True))
        return [(name, name) for name in sorted(names)]


class ActorFilter(_FixedChoices):
    title, parameter_name = "actor", "actor"
    SYSTEM = (
        audit.SWEEP,
        audit.SUPERSEDE,
        audit.RUN_CLOSE,
        audit.ANONYMOUS,
        audit.command("register_tool"),
        audit.command("seed_tools"),
        audit.command("verify_audit"),
        audit.command("create_reviewer"),
        audit.command("create_api_client"),
        audit.command("seed_demo"),
    )

    def lookups(self, request, model_admin):
        users = get_user_model().objects.order_by("username").values_list("username", flat=True)
        clients = ApiClient.objects.order_by("name").values_list("name", flat=True)
        return (
            [(f"user:{name}", f"user:{name}") for name in users]
            + [(f"client:{name}", f"client:{name}") for name in clients]
            + [(name, name) for name in self.SYSTEM]
        )


class _TypedValue(admin.ListFilter):
    """A filter whose value is typed into a box (a GET form that keeps the other filters)."""

    template = "admin/audit/auditevent/typed_filter.html"
    parameters: tuple[tuple[str, str, str], ...] = ()  # (GET name, label, input type)

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        for name, _, _ in self.parameters:
            if name in params:
                value = params.pop(name)
                self.used_parameters[name] = (value[-1] if isinstance(value, list) else value).strip()

    def has_output(self):
        return True

    def expected_parameters(self):
        return [name for name, _, _ in self.parameters]

    def choices(self, changelist):
        names = self.expected_parameters()
        kept = [
            (key, value)
            for key, values in changelist.params.items()
            if key not in names and key != "p"
            for value in (values if isinstance(values, list) else [values])
        ]
        yield {
            "fields": [
                {"name": name, "label": label, "type": kind, "value": self.used_parameters.get(name, "")}
                for name, label, kind in self.parameters
            ],
            "kept": kept,
            "presets": list(self.presets(changelist)),
            "clear": changelist.get_query_string(remove=[*names, "p"]) if self.used_parameters else None,
        }

    def presets(self, changelist):
        return []


class PatientFilter(_TypedValue):
    title = "patient_ref"
    parameters = (("patient_ref", "Patient ref", "text"),)

    def queryset(self, request, queryset):
        value = self.used_parameters.get("patient_ref")
        return queryset.filter(patient_ref=value) if value else queryset


def _day(value: str) -> datetime:
    try:
        return timezone.make_aware(datetime.combine(datetime.strptime(value, "%Y-%m-%d").date(), time.min))
    except ValueError:
        raise IncorrectLookupParameters(f"Dates are YYYY-MM-DD (got {value!r}).") from None


class DateRangeFilter(_TypedValue):
    """When: from a day (inclusive) to a day (inclusive), on the `at` index; no per-month DISTINCT."""

    title = "date"
    parameters = (("since", "From", "date"), ("until", "To", "date"))

    def presets(self, changelist):
        today = timezone.localdate()
        for label, days in (("Today", 0), ("Past 7 days", 6), ("Past 30 days", 29)):
            since = (today - timedelta(days=days)).isoformat()
            yield {
                "label": label,
                "url": changelist.get_query_string({"since": since}, remove=["until", "p"]),
                "selected": self.used_parameters.get("since") == since and "until" not in self.used_parameters,
            }

    def queryset(self, request, queryset):
        since, until = self.used_parameters.get("since"), self.used_parameters.get("until")
        if since:
            queryset = queryset.filter(at__gte=_day(since))
        if until:
            queryset = queryset.filter(at__lt=_day(until) + timedelta(days=1))
        return queryset
