"""Payload hashing: SHA-256 over RFC 8785 (JCS) canonical JSON.

An approval is bound to the exact arguments a reviewer saw (SPEC section 4). Two
encodings of the same JSON value (key order, ``1.0`` vs ``1``, ``-0`` vs ``0``,
whitespace, escapes) must hash the same, and any other value must not, so the hash
is taken over the RFC 8785 canonical form. Canonicalisation is the ``rfc8785``
package's job; a hand-rolled ``json.dumps(sort_keys=True)`` gets number formatting
and key order (UTF-16 code units, not code points) wrong.

What RFC 8785 does *not* do, on purpose: Unicode normalisation. A precomposed
"é" (U+00E9) and "e" + U+0301 are different strings and hash differently.

Values ``rfc8785`` refuses raise a subclass of ``CanonicalizationError`` (itself a
``ValueError``): integers beyond ±(2**53 - 1) (``IntegerDomainError``), NaN and
infinities (``FloatDomainError``), non-string keys, lone surrogates, other types.
The HTTP layer rejects such request bodies with 400 ``invalid_payload`` before
anything is hashed, so reaching one of these here is a server bug, not user input.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import rfc8785

CanonicalizationError = rfc8785.CanonicalizationError


def canonical_json(value: object) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value (dict, list, str, int, float, bool, None)."""
    return rfc8785.dumps(value)


def payload_hash(value: object) -> str:
    """SHA-256 hex digest (64 lowercase hex chars) of ``canonical_json(value)``.

    Through `canonical_json_fast` (below), which writes the same bytes: a suspend hashes
    the args several times (verdict audit, approval, contract).
    """
    return hashlib.sha256(canonical_json_fast(value)).hexdigest()


@dataclass(frozen=True)
class Canonical:
    """A JSON value with its canonical form taken once, for a caller that needs both its size
    and its hash (a decision: is the card cut, and what is approved), never a stored copy."""

    value: object
    size: int  # bytes of canonical_json(value)
    hash: str  # payload_hash(value)


def canonical(value: object) -> Canonical:
    text = canonical_json_fast(value)
    return Canonical(value, len(text), hashlib.sha256(text).hexdigest())


_MAX_SAFE_INTEGER = 2**53 - 1
# Compact, sorted, non-ASCII kept. No cycle check: a circular value fails the plain walk first,
# as the reference does.
_plain_text = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False, check_circular=False
).encode


def beyond_safe_numbers(value: object) -> bool:
    """True if a number in the JSON `value` is beyond ±(2^53−1), however it is written.

    Stored as jsonb such a number comes back an integer that RFC 8785 refuses to write, so
    an audit row holding it could never be verified; the API's parser refuses them, and a
    form that takes JSON by hand asks this.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if (kind is int or kind is float) and not abs(item) <= _MAX_SAFE_INTEGER:  # NaN is not <=
            return True
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
    return False


def _plain_json(value: object) -> bool:
    """True when the standard library writes `value` byte for byte as RFC 8785 does.

    That holds for strings, safe integers, booleans, null, lists and string-keyed
    objects whose keys stay in the Basic Multilingual Plane (there code-point order,
    which ``sort_keys`` uses, equals RFC 8785's UTF-16 code-unit order), and for the
    common floats: those with a fraction from 1e-4 up, which Python's `repr` and
    ECMAScript both write positionally with the same shortest digits (72.4, 0.125).
    Other floats differ in layout ("5.0" for 5, "1e-05", "1e+16"): a value with one,
    and anything else unusual, goes to the reference encoder.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER
    if kind is float:  # NaN and the infinities fail the comparison
        return 1e-4 <= abs(value) < 1e16 and not value.is_integer()
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (not key.isascii() and max(key) > "\uffff"):
                return False
            if not _plain_json(item):
                return False
        return True
    if kind is list:
        return all(_plain_json(item) for item in value)
    return False


is_plain_json = _plain_json


def canonical_json_fast(value: object, *, plain: bool | None = None) -> bytes:
    """`canonical_json(value)`: the same bytes, several times faster for the values most rows hold.

    The audit chain hashes every row it writes and `verify_audit` re-hashes every
    row it reads, where the pure-Python reference encoder is the slow part, and every
    inbox card sizes its args. The standard library's C JSON encoder produces the same
    bytes for plain values (see `_plain_json`);
    anything else (other floats, keys past the BMP, subclasses, lone surrogates,
    unsafe integers) goes to the reference, which also raises its errors: the
    canonical form is the rfc8785 package's, never written here. Property tests hold
    this equal to the reference on arbitrary JSON (tests/core/test_canonical_json.py).
    A caller that knows the answer of `is_plain_json(value)` for its fixed shape passes `plain`.
    """
    if _plain_json(value) if plain is None else plain:
        try:
            return _plain_text(value).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: the reference encoder raises its own error for it
    return rfc8785.dumps(value)
