"""Strict JSON request parsing.

Payload hashes are computed over RFC 8785 canonical JSON, which has no answer for
duplicate keys, NaN/Infinity or integers JavaScript cannot represent exactly, nor
keeps a number written with more precision than a double holds. A
body containing any of them is refused before anything is stored, instead of
being silently normalised into something the reviewer never saw. So is a NUL
character anywhere (PostgreSQL can store it neither in text nor in jsonb), a body
nested deeper than MAX_JSON_DEPTH (every part of Condor that walks a value, the canonical
JSON of a payload hash, the admin's pages, would otherwise meet a depth it cannot take),
and a body over CONDOR_MAX_BODY_BYTES is refused before it is read (core/body_limit.py).
"""

import json
import re
from decimal import Decimal

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from core.body_limit import read_capped

MAX_SAFE_INTEGER = 2**53 - 1
# Objects and arrays inside one another, the body itself counting as the first: args,
# metadata, values, outputs and cards may nest 31 deep within it.
MAX_JSON_DEPTH = 32


class StrictJSONError(ValueError):
    pass


def _no_duplicate_keys(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise StrictJSONError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _bounded_int(text: str) -> int:
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        raise StrictJSONError(f"integer {text} is beyond ±(2^53−1)")
    return value


def _no_constants(name: str):
    raise StrictJSONError(f"{name} is not valid JSON")


def _shown(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:37]}..."


def _exact_float(text: str) -> float:
    """The number `text` writes, if a double holds it as written and it is within ±(2^53−1).

    Every double beyond 2^53 is a whole number, and stored as jsonb it comes back as an
    integer that the canonical JSON refuses to write (the audit log could no longer be
    verified): beyond ±(2^53−1), a number is refused however it is written, as an integer is.
    Below it, a double cannot hold every decimal: 1.00000000000000001 would be read as 1 and
    1e-400 as 0, and the card would show, and the hash bind, another number than the agent
    sent. Accepted are the forms that write that very double: the shortest (what the
    canonical JSON writes), the 17 significant digits some encoders always write
    (0.10000000000000001 is 0.1), or its exact binary value.
    """
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise StrictJSONError(f"number {_shown(text)} is out of range")
    if abs(value) > MAX_SAFE_INTEGER:
        raise StrictJSONError(f"number {_shown(text)} is beyond ±(2^53−1)")
    try:
        written = Decimal(text)
    except ArithmeticError:  # an exponent past what a Decimal holds: no double is written that way
        raise StrictJSONError(f"number {_shown(text)} is out of range") from None
    if written not in (Decimal(repr(value)), Decimal(format(value, ".17g")), Decimal(value)):
        raise StrictJSONError(
            f"number {_shown(text)} cannot be held exactly (it would read as {value!r}); "
            "send fewer digits, or the number as a string"
        )
    return value


# Only an escape can put a surrogate or a NUL into a decoded string (raw control
# characters are invalid JSON and strict UTF-8 cannot carry a surrogate), so a body
# without one of these escapes skips the walk below.
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F]|0000)")


def _no_unstorable_text(value) -> None:
    # json accepts "\ud800" escapes, but a lone surrogate is not a Unicode scalar value:
    # RFC 8785 cannot canonicalise it and PostgreSQL cannot store it. Nor can PostgreSQL
    # store U+0000 in text or jsonb: refused here as a 400 rather than failing as a 500.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise StrictJSONError("a string contains a NUL character (\\u0000)")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise StrictJSONError("a string contains a lone surrogate") from None
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _no_deeper_than(value, limit: int) -> None:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise StrictJSONError(f"the body is nested deeper than {limit} objects and arrays")
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))


def loads_strict(raw: bytes | str):
    """Parse JSON refusing duplicate keys, NaN/Infinity, unsafe integers, lone surrogates, NUL and
    nesting deeper than MAX_JSON_DEPTH.

    Bytes must be UTF-8 (UnicodeDecodeError otherwise): json.loads would sniff UTF-16/32.
    """
    if isinstance(raw, bytes | bytearray):
        raw = raw.decode("utf-8")  # strict UTF-8 cannot carry a surrogate itself...
    else:
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            raise StrictJSONError("a string contains a lone surrogate") from None
    try:
        data = json.loads(
            raw,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constants,
            parse_int=_bounded_int,
            parse_float=_exact_float,
        )
    except RecursionError:
        raise StrictJSONError(f"the body is nested deeper than {MAX_JSON_DEPTH} objects and arrays") from None
    if _UNSTORABLE_ESCAPE.search(raw):  # ...only an escape can, so most bodies skip the walk
        _no_unstorable_text(data)
    # Fewer brackets than the limit cannot nest past it: most bodies skip this walk too.
    if isinstance(data, dict | list) and raw.count("{") + raw.count("[") > MAX_JSON_DEPTH:
        _no_deeper_than(data, MAX_JSON_DEPTH)
    return data


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        raw = read_capped(stream, request.META if request is not None else {})
        if not raw.strip():
            return {}
        try:
            data = loads_strict(raw)
        except UnicodeDecodeError:
            raise ParseError("The body is not UTF-8.") from None
        except StrictJSONError as exc:
            raise ParseError(f"Invalid JSON: {exc}.") from None
        except ValueError as exc:
            raise ParseError(f"Malformed JSON: {exc}.") from None
        if not isinstance(data, dict):
            raise ParseError("The body must be a JSON object.")
        return data
