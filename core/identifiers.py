"""The alphabets of the names agents send: tool names, op verbs, tool call ids, form field names.

Each is plain ASCII on purpose. A name a reviewer reads must be the name the gate
judged: with Unicode allowed, ``dеlete`` (a Cyrillic е) or ``delete\\u200b`` would look
like a destructive verb on the card and slip past the engine's check. Choices made
where the SPEC is silent:

* tool names and ops (SPEC section 2): letters, digits, ``.``, ``_``, ``-``;
* a tool call id is a path segment of ``runs/{id}/tool-calls/{tool_call_id}/result/``:
  letters, digits, ``_``, ``-``, ``.``, ``:``, starting with a letter, digit or ``_``
  (an id of dots alone would be a ``.``/``..`` segment that clients normalise away);
* a clarification field name becomes a key of the answers object a browser builds,
  so it must be an identifier (``__proto__``, ``constructor`` or ``prototype`` can
  never pass: they start with ``_`` or are refused by name) of at most 64 characters.
"""

import re

TOOL_NAME_RE = re.compile(r"[A-Za-z0-9._-]+", re.ASCII)
TOOL_NAME_RULE = "plain ASCII: letters, digits, '.', '_' and '-' only"

TOOL_CALL_ID_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*", re.ASCII)
TOOL_CALL_ID_RULE = (
    "letters, digits, '_', '-', '.' and ':' only, starting with a letter, digit or '_' "
    "(it is a path segment of the result URL)"
)

FIELD_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}", re.ASCII)
FIELD_NAME_RULE = "an identifier: a letter, then up to 63 letters, digits or '_'"
# Identifier-shaped, yet special on a JavaScript object.
RESERVED_FIELD_NAMES = frozenset(
    {
        "constructor",
        "prototype",
        "toString",
        "valueOf",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
    }
)


def is_tool_name(value) -> bool:
    """A tool name or a non-empty op verb."""
    return isinstance(value, str) and TOOL_NAME_RE.fullmatch(value) is not None


def is_tool_call_id(value) -> bool:
    return isinstance(value, str) and TOOL_CALL_ID_RE.fullmatch(value) is not None


def is_field_name(value) -> bool:
    return isinstance(value, str) and FIELD_NAME_RE.fullmatch(value) is not None and value not in RESERVED_FIELD_NAMES


class ToolCallIdConverter:
    """URL converter: a path segment that is not a possible tool call id matches no route (404)."""

    regex = r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,119}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
