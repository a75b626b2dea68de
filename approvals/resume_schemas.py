"""Resume schemas: the JSON schema a reviewer's answer must satisfy to resume a run.

``approval_resume_schema()`` has properties exactly ``{approved, reason}``: the inbox
recognises an approval card by that key set, the approver comes from the login and
never from the form, and there is no ``default`` (only an explicit ``approved: true``
lets the tool run). ``clarification_resume_schema()`` builds a form from the agent's
missing fields ``{name, type?, hint?}``.

Vocabulary: MCP ``elicitation/create`` ``requestedSchema`` (spec 2025-11-25), a flat
object of string (minLength, maxLength, format date | date-time | email), number /
integer (minimum, maximum), boolean, single select (``enum``, or ``oneOf`` of
``{const, title}`` when options have labels) and multi select (``type: array``,
``items.enum`` or ``items.anyOf`` of ``{const, title}``, minItems, maxItems). Not the
legacy ``enumNames``: deprecated, and not JSON Schema, so we could not enforce it.

Extras beyond that vocabulary. MCP's schema.json leaves these objects open, the
TypeScript SDK parses them with plain zod objects (unknown keys stripped) and checks
answers with non-strict Ajv (unknown keywords ignored), so a client that does not
know an extra still renders a plain, correct field; we enforce everything on our
side (answers are checked by approvals/resume_validation.py).
  * root ``additionalProperties: false`` (answers with unknown keys are refused) and
    root ``description`` (the clarification message);
  * ``x-condor-widget``: ``"radio"`` on a single select, ``"textarea"`` on free text;
    presentation only;
  * ``formatMinimum`` / ``formatMaximum`` on date / date-time fields: inclusive bounds
    (full-date, or RFC 3339 with offset), named as ajv-formats names them;
  * ``uniqueItems: true`` on multi selects (standard JSON Schema).
A required free-text field gets ``minLength: 1`` unless the hint sets ``min``.

Hints: ``label``, ``description``, ``required`` (default true), ``options`` (strings
or ``{value, label?}``), ``radio``, ``multiple``, ``format``, ``min`` / ``max``
(numbers, dates, text lengths or choice counts, by field kind), ``textarea``; ``null``
means absent. ``type`` is string (default), number, integer, boolean, date,
date-time or array. Anything we cannot honour exactly -- unknown keys, wrong types,
options that are not distinct non-empty strings, bounds of the wrong kind or min >
max, a flag that does not fit (radio on a multi select, textarea on a date) --
degrades THAT field to free text keeping only a well-typed label, description and
required. That never raises: a text box beats a broken picker. Bad or duplicate
names do raise ``InvalidClarificationRequest``: without a name there is no field. A
name must be an identifier (core/identifiers.py): the reviewer's browser builds
the answers object keyed by it, where ``__proto__`` and friends are not plain keys.
"""

from __future__ import annotations

import json
import math

from approvals.resume_validation import DATE_PARSERS
from core.identifiers import FIELD_NAME_RULE, is_field_name

WIDGET_KEY = "x-condor-widget"


class InvalidClarificationRequest(ValueError):
    """The clarification request itself is unusable (bad message, names); maps to 400."""


# A form goes out on its card to every inbox that may see it, and a card must fit one
# websocket frame (inbox/pages.py PAGE_MAX_BYTES, 256 KB, args aside): the
# form built from the agent's fields is capped well below that.
FORM_MAX_BYTES = 64 * 1024


def approval_resume_schema() -> dict:
    return {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "title": "Approve"},
            "reason": {"type": "string", "title": "Reason"},
        },
        "required": ["approved"],
        "additionalProperties": False,
    }


def clarification_resume_schema(message: str, missing: list) -> dict:
    if not isinstance(message, str) or not message.strip():
        raise InvalidClarificationRequest("message must be a non-empty string")
    if not isinstance(missing, list) or not missing:
        raise InvalidClarificationRequest("missing must be a non-empty list of fields")
    seen: set[str] = set()
    for i, item in enumerate(missing):
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise InvalidClarificationRequest(f"missing[{i}].name must be a non-empty string")
        if not is_field_name(name):
            raise InvalidClarificationRequest(
                f"missing[{i}].name {name!r} must be {FIELD_NAME_RULE}, "
                "and not a JavaScript object built-in such as 'constructor'"
            )
        if name in seen:
            raise InvalidClarificationRequest(f"missing[{i}].name {name!r} is a duplicate")
        seen.add(name)

    properties, required = {}, []
    for item in missing:
        try:
            prop, is_required = _field(item)
        except _Malformed:
            prop, is_required = _degraded(item)
        properties[item["name"]] = prop
        if is_required:
            required.append(item["name"])
    schema = {
        "type": "object",
        "description": message,
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    size = len(json.dumps(schema).encode())
    if size > FORM_MAX_BYTES:
        raise InvalidClarificationRequest(
            f"the form built from 'missing' is {size} bytes; a card carries "
            f"at most {FORM_MAX_BYTES} (fewer fields, options or shorter labels)"
        )
    return schema


# --- building one field ---------------------------------------------------------


class _Malformed(Exception):
    """Internal: this field's hint cannot be honoured; degrade the field."""


_ITEM_KEYS = {"name", "type", "hint"}
_HINT_KEYS = {"label", "description", "required", "options", "radio", "multiple", "format", "min", "max", "textarea"}
_TYPES = {"string", "number", "integer", "boolean", "date", "date-time", "array"}
_FORMATS = {"date", "date-time", "email"}


def _field(item: dict) -> tuple[dict, bool]:
    hint = item.get("hint")
    hint = {} if hint is None else hint
    if not isinstance(hint, dict) or not set(item) <= _ITEM_KEYS or not set(hint) <= _HINT_KEYS:
        raise _Malformed
    # null means "not given" for every key: agents serialise optional fields that way.
    hint = {k: v for k, v in hint.items() if v is not None}
    kind = "string" if item.get("type") is None else item["type"]
    fmt = hint.get("format")
    if not isinstance(kind, str) or kind not in _TYPES:
        raise _Malformed
    if fmt is not None and (not isinstance(fmt, str) or fmt not in _FORMATS):
        raise _Malformed
    radio, multiple, textarea = (_flag(hint, k) for k in ("radio", "multiple", "textarea"))
    required = _flag(hint, "required", default=True)
    low, high = hint.get("min"), hint.get("max")
    options = _options(hint.get("options"))

    if kind in ("date", "date-time"):
        if fmt not in (None, kind):
            raise _Malformed
        kind, fmt = "string", kind
    if kind == "array":
        if "multiple" in hint and not multiple:
            raise _Malformed
        kind, multiple = "string", True

    if options is not None:
        if kind != "string" or fmt or textarea or (radio and multiple):
            raise _Malformed
        prop = _multi_select(options, low, high) if multiple else _single_select(options, low, high)
        if radio:
            prop[WIDGET_KEY] = "radio"
    elif multiple or radio:
        raise _Malformed  # a picker without choices
    elif kind == "boolean":
        if fmt or textarea or low is not None or high is not None:
            raise _Malformed
        prop = {"type": "boolean"}
    elif kind in ("number", "integer"):
        if fmt or textarea:
            raise _Malformed
        prop = {"type": kind, **_number_bounds(kind, low, high)}
    elif fmt in ("date", "date-time"):
        if textarea:
            raise _Malformed
        prop = {"type": "string", "format": fmt, **_date_bounds(fmt, low, high)}
    else:
        if textarea and fmt:
            raise _Malformed
        prop = {"type": "string", **_length_bounds(low, high, required)}
        if fmt:
            prop["format"] = fmt
        if textarea:
            prop[WIDGET_KEY] = "textarea"
    return _labelled(prop, item["name"], hint), required


def _degraded(item: dict) -> tuple[dict, bool]:
    # Salvage only what cannot break rendering; every widget hint is dropped.
    hint = item.get("hint") if isinstance(item.get("hint"), dict) else {}
    safe = {k: hint[k] for k in ("label", "description") if _text(hint.get(k))}
    required = hint.get("required")
    required = required if isinstance(required, bool) else True
    prop = {"type": "string", "minLength": 1} if required else {"type": "string"}
    return _labelled(prop, item["name"], safe), required


def _labelled(prop: dict, name: str, hint: dict) -> dict:
    label, description = hint.get("label"), hint.get("description")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise _Malformed
    if description is not None and not isinstance(description, str):
        raise _Malformed
    out = {"title": label or name, **prop}
    if description:
        out["description"] = description
    return out


def _flag(hint: dict, key: str, default: bool = False) -> bool:
    value = hint.get(key, default)
    if not isinstance(value, bool):
        raise _Malformed
    return value


def _options(raw: object) -> list[tuple[str, str | None]] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise _Malformed
    out = []
    for opt in raw:
        if isinstance(opt, dict) and "value" in opt and set(opt) <= {"value", "label"}:
            value, label = opt["value"], opt.get("label")
        else:
            value, label = opt, None
        if not _text(value) or (label is not None and not _text(label)):
            raise _Malformed
        out.append((value, label))
    if len({value for value, _ in out}) != len(out):
        raise _Malformed  # duplicate values make the answer ambiguous
    return out


def _single_select(options: list, low: object, high: object) -> dict:
    if low is not None or high is not None:
        raise _Malformed
    if all(label is None for _, label in options):
        return {"type": "string", "enum": [value for value, _ in options]}
    return {"type": "string", "oneOf": [{"const": v, "title": lbl or v} for v, lbl in options]}


def _multi_select(options: list, low: object, high: object) -> dict:
    if all(label is None for _, label in options):
        items = {"type": "string", "enum": [value for value, _ in options]}
    else:
        items = {"anyOf": [{"const": v, "title": lbl or v} for v, lbl in options]}
    bounds = _count_bounds(low, high, "minItems", "maxItems")
    if bounds.get("minItems", 0) > len(options):
        raise _Malformed  # could never be satisfied
    return {"type": "array", "items": items, "uniqueItems": True, **bounds}


def _length_bounds(low: object, high: object, required: bool) -> dict:
    bounds = _count_bounds(low, high, "minLength", "maxLength")
    if required and low is None and bounds.get("maxLength", 1) >= 1:
        bounds = {"minLength": 1, **bounds}  # "required" means actually answered, not ""
    return bounds


def _count_bounds(low: object, high: object, low_key: str, high_key: str) -> dict:
    bounds = {}
    for key, value in ((low_key, low), (high_key, high)):
        if value is not None:
            if not _number(value) or value < 0 or not _integral(value):
                raise _Malformed
            bounds[key] = int(value)
    _ordered(bounds.get(low_key), bounds.get(high_key))
    return bounds


def _number_bounds(kind: str, low: object, high: object) -> dict:
    bounds = {}
    for key, value in (("minimum", low), ("maximum", high)):
        if value is not None:
            if not _number(value):
                raise _Malformed
            if kind == "integer":
                if not _integral(value):
                    raise _Malformed
                value = int(value)
            bounds[key] = value
    _ordered(bounds.get("minimum"), bounds.get("maximum"))
    return bounds


def _date_bounds(fmt: str, low: object, high: object) -> dict:
    parse, bounds, parsed = DATE_PARSERS[fmt], {}, []
    for key, value in (("formatMinimum", low), ("formatMaximum", high)):
        if value is not None:
            try:
                parsed.append(parse(value))
            except ValueError:
                raise _Malformed from None
            bounds[key] = value
    if len(parsed) == 2:
        _ordered(*parsed)
    return bounds


def _ordered(low: object, high: object) -> None:
    if low is not None and high is not None and low > high:
        raise _Malformed


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


# Integers past ±(2**53 - 1) are not portable JSON and rfc8785 refuses them; the
# schema is stored and served, so it must stay canonicalisable.
_SAFE_INT = 2**53 - 1


def _number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):  # apart from floats: math.isfinite() overflows on huge ints
        return abs(value) <= _SAFE_INT
    return isinstance(value, float) and math.isfinite(value)


def _integral(value: int | float) -> bool:
    return isinstance(value, int) or (value.is_integer() and abs(value) <= _SAFE_INT)
