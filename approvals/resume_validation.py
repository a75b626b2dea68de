"""Validating a reviewer's answer against a resume schema (see approvals/resume_schemas.py).

Draft 2020-12 with format assertion for date / date-time / email, plus the
``formatMinimum`` / ``formatMaximum`` date bounds the builder emits. Dates are
full-date (YYYY-MM-DD); date-times are RFC 3339 with a mandatory offset, so bounds
compare instants. The same parsers check the builder's bounds (``DATE_PARSERS``),
so a bound the builder accepts is a bound this module can enforce. Errors come
back as short, field-prefixed sentences a reviewer can read.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from jsonschema.validators import extend

# --- dates: one parser for the format check and for the bounds -------------------

_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME_RE = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def parse_date(value: object) -> date:
    if not isinstance(value, str) or not _DATE_RE.fullmatch(value):
        raise ValueError(f"not a full-date: {value!r}")
    return date.fromisoformat(value)


def parse_datetime(value: object) -> datetime:
    """RFC 3339 date-time; the offset is mandatory so values compare as instants.

    Leap seconds (":60") are refused: Python's datetime cannot represent them.
    """
    match = _DATETIME_RE.fullmatch(value) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"not an RFC 3339 date-time: {value!r}")
    day, clock, fraction, offset = match.groups()
    micro = f".{(fraction + '00000')[:6]}" if fraction else ""
    offset = "+00:00" if offset in ("Z", "z") else offset
    return datetime.fromisoformat(f"{day}T{clock}{micro}{offset}")


DATE_PARSERS = {"date": parse_date, "date-time": parse_datetime}

# jsonschema checks "date-time" only when rfc3339-validator is installed (it is not),
# and would silently pass anything; register our own so format is always asserted.
_FORMAT_CHECKER = FormatChecker(formats=("email",))
_FORMAT_CHECKER.checks("date", raises=ValueError)(lambda v: not isinstance(v, str) or bool(parse_date(v)))
_FORMAT_CHECKER.checks("date-time", raises=ValueError)(lambda v: not isinstance(v, str) or bool(parse_datetime(v)))


def _format_bound(is_min: bool):
    def check(validator, bound, instance, schema):
        parse = DATE_PARSERS.get(schema.get("format"))
        if parse is None or not isinstance(instance, str):
            return
        try:
            value, limit = parse(instance), parse(bound)
        except ValueError:
            return  # a malformed value is reported by the "format" keyword
        if value < limit if is_min else value > limit:
            word = "before" if is_min else "after"
            yield ValidationError(f"{instance!r} is {word} {bound}")

    return check


_Validator = extend(
    Draft202012Validator,
    {"formatMinimum": _format_bound(True), "formatMaximum": _format_bound(False)},
)


# --- validating an answer ---------------------------------------------------------


def validate_resume_data(schema: dict, data: dict) -> list[str]:
    """Check a reviewer's answer against a resume schema; [] means valid.

    Draft 2020-12 with format assertion for date / date-time / email and the
    formatMinimum / formatMaximum date bounds. Messages are prefixed with the
    field name, sorted and de-duplicated so responses are stable.
    """
    validator = _Validator(schema, format_checker=_FORMAT_CHECKER)
    messages = set()
    for error in validator.iter_errors(data):
        messages.update(_messages(error))
    return sorted(messages)


_TYPE_WORDS = {
    "boolean": "true or false",
    "string": "text",
    "number": "a number",
    "integer": "a whole number",
    "array": "a list",
    "object": "a JSON object",
}
_FORMAT_WORDS = {
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date-time with offset (e.g. 2025-01-31T09:30:00Z)",
    "email": "an email address",
}
_TEMPLATES = {
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
    "formatMinimum": "must be on or after {}",
    "formatMaximum": "must be on or before {}",
    "minLength": "must be at least {} characters",
    "maxLength": "must be at most {} characters",
    "minItems": "choose at least {}",
    "maxItems": "choose at most {}",
    "uniqueItems": "must not repeat a choice",
}


def _messages(error: ValidationError) -> list[str]:
    kind, value, instance = error.validator, error.validator_value, error.instance
    if kind == "required":
        return [f"{name}: is required" for name in value if name not in instance]
    if kind == "additionalProperties":
        known = error.schema.get("properties", {})
        return [f"{key}: is not a field of this form" for key in instance if key not in known]
    if not error.absolute_path:
        return [f"answer must be {_TYPE_WORDS.get(value, value)}" if kind == "type" else error.message]
    if kind == "type":
        text = f"must be {_TYPE_WORDS.get(value, value)}"
    elif kind in ("enum", "oneOf", "anyOf"):
        choices = value if kind == "enum" else [c.get("const") for c in value if isinstance(c, dict)]
        text = "must be one of: " + ", ".join(str(c) for c in choices)
    elif kind == "format":
        text = f"must be {_FORMAT_WORDS.get(value, value)}"
    elif kind == "minLength" and value == 1:
        text = "must not be empty"
    elif kind in _TEMPLATES:
        text = _TEMPLATES[kind].format(value)
    else:
        text = error.message  # not a keyword we emit; never .format() it (may hold braces)
    return [f"{error.absolute_path[0]}: {text}"]
