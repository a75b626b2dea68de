"""condor.db_params.adapter gives what the field's own get_db_prep_save gives, for every value of every hot column."""

import datetime
import uuid
import warnings

import pytest
from django.apps import apps
from django.db import connection, models
from django.db.models import Value
from django.utils import timezone
from django.utils.translation import gettext_lazy

from condor.db_params import adapter
from condor.sql import _insert_fields

HOT_MODELS = ["approvals.AuditEvent", "approvals.ToolCall", "approvals.Approval", "runs.RunEvent", "runs.Run",
              "sessions_app.Session"]
AWARE = timezone.now()
SAMPLES = [
    None, "", "text", "ünïcode ✓", gettext_lazy("lazy"), 0, 7, 2**40, True, False, 1.5,
    AWARE, AWARE.astimezone(datetime.timezone(datetime.timedelta(hours=5))), AWARE.replace(tzinfo=None),
    uuid.uuid4(), str(uuid.uuid4()), {}, {"a": [1, "b", None]}, [], [1, 2], Value(None, models.JSONField()),
]


def _both(function, value):
    """(result, exception type) of function(value), naive-datetime warnings caught."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return function(value), None
        except Exception as error:  # noqa: BLE001 - the two must fail alike, whatever the error
            return None, type(error)


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if hasattr(a, "obj") and hasattr(a, "dumps"):  # psycopg's Jsonb: compared by what it wraps and how it dumps
        return a.obj == b.obj and a.dumps is b.dumps
    if isinstance(a, Value):
        return a.value == b.value
    return a == b


def _hot_fields():
    return [pytest.param(field, id=f"{label}.{field.attname}")
            for label in HOT_MODELS for field in _insert_fields(apps.get_model(label))]


@pytest.mark.parametrize("field", _hot_fields())
def test_every_sample_adapts_as_the_field_itself_would(field):
    adapt = adapter(field, connection)
    for value in SAMPLES:
        (fast, fast_error), (slow, slow_error) = _both(adapt, value), _both(
            lambda v: field.get_db_prep_save(v, connection=connection), value)
        assert fast_error is slow_error, (field, value)
        assert _same(fast, slow), (field, value, fast, slow)


@pytest.mark.parametrize("field", _hot_fields())
def test_every_sample_adapts_as_a_lookups_parameter_would(field):
    adapt = adapter(field, connection, saving=False)
    for value in SAMPLES:
        (fast, fast_error), (slow, slow_error) = _both(adapt, value), _both(
            lambda v: field.get_db_prep_value(v, connection, prepared=False), value)
        assert fast_error is slow_error, (field, value)
        assert _same(fast, slow), (field, value, fast, slow)


def test_a_naive_datetime_still_warns():
    field = apps.get_model("runs.RunEvent")._meta.get_field("created_at")
    with pytest.warns(RuntimeWarning, match="naive datetime"):
        adapter(field, connection)(AWARE.replace(tzinfo=None))


def test_a_field_with_its_own_conversion_takes_its_own_path():
    class Shouting(models.CharField):
        def get_prep_value(self, value):
            return super().get_prep_value(value).upper()

    field = Shouting(max_length=10)
    assert adapter(field, connection)("quiet") == "QUIET"
