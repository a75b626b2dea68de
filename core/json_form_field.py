"""A JSON form field for the admin that reads its text as the API reads a body (core/parsers.py).

Django's forms.JSONField parses with json.loads, which raises RecursionError (a 500, not a
form error) on text nested past Python's recursion limit, both when it cleans the value and
when it shows the bound form again. This field checks the text with `loads_strict` first:
nesting past MAX_JSON_DEPTH, duplicate keys, NaN and the rest are a form error that names
the problem, and the text the admin typed is shown back as typed.
"""

from django import forms
from django.core.exceptions import ValidationError
from django.db import models

from core.parsers import loads_strict


class _Unread(str):
    """Bound text that is not acceptable JSON: shown back in the widget as it was typed."""


def _refusal(text: str) -> str | None:
    """Why `text` is not acceptable JSON, or None if it is."""
    try:
        loads_strict(text)
    except ValueError as error:  # StrictJSONError, JSONDecodeError, UnicodeError: all ValueErrors
        return str(error)
    return None


class StrictJSONField(forms.JSONField):
    def to_python(self, value):
        if isinstance(value, str) and value.strip() and not self.disabled:
            refusal = _refusal(value)
            if refusal is not None:
                raise ValidationError(f"Enter valid JSON: {refusal}.", code="invalid", params={"value": value})
        return super().to_python(value)

    def bound_data(self, data, initial):
        if isinstance(data, str) and not self.disabled and _refusal(data) is not None:
            return _Unread(data)
        return super().bound_data(data, initial)

    def prepare_value(self, value):
        return value if isinstance(value, _Unread) else super().prepare_value(value)


# For a ModelAdmin: `formfield_overrides = STRICT_JSON_FIELDS`.
STRICT_JSON_FIELDS = {models.JSONField: {"form_class": StrictJSONField}}
