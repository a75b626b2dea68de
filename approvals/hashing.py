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
from json.encoder import c_make_encoder

import rfc8785

CanonicalizationError = rfc8785.CanonicalizationError


def canonical_json(value: object) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value (dict, list, str, int, float, bool, None)."""
    return rfc8785.dumps(value)


def payload_hash(value: object) -> str:
    """SHA-256 hex digest (64 lowercase hex chars) of ``canonical_json(value)``.

    Through `canonical_json_fast` (below), which writes the same bytes: a suspend hashes
    the args several times (verdict audit, approval, contract), ~50 µs each the slow way.
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
    text = canonical_json(value)
    return Canonical(value, len(text), hashlib.sha256(text).hexdigest())


_MAX_SAFE_INTEGER = 2**53 - 1
# Built once: json.dumps with options would build a new encoder on every call.
_PLAIN_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
if c_make_encoder is not None:
    # The C encoder behind it, kept too: `JSONEncoder.encode` makes a new one per call (~1 µs of
    # a card's 3). No circular check: a circular value fails the plain walk first, as the reference does.
    _encode_plain = c_make_encoder(None, _PLAIN_ENCODER.default, json.encoder.encode_basestring, None,
                                   ":", ",", True, False, False)

    def _plain_text(value) -> str:
        return "".join(_encode_plain(value, 0))
else:  # a Python without the C accelerator
    _plain_text = _PLAIN_ENCODER.encode
# The C string writer behind that encoder: escapes `"`, `\\` and U+0000–U+001F exactly as
# RFC 8785 section 3.2.2.2 does (\b \t \n \f \r short, the others \u00xx), everything else as is.
_string = json.encoder.encode_basestring


def _plain_json(value: object) -> bool:
    """True when the standard library writes `value` byte for byte as RFC 8785 does.

    That holds for strings, safe integers, booleans, null, lists and string-keyed
    objects whose keys stay in the Basic Multilingual Plane (there code-point order,
    which ``sort_keys`` uses, equals RFC 8785's UTF-16 code-unit order), and for the
    common floats: those with a fraction from 1e-4 up, which Python's `repr` and
    ECMAScript both write positionally with the same shortest digits (72.4, 0.125).
    Other floats differ in layout ("5.0" for 5, "1e-05", "1e+16"): a value with one
    is written by `_write` below, and anything else unusual by the reference encoder.
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


class _Unusual(Exception):
    """A value `_write` leaves to the reference encoder (which writes it, or raises its own error)."""


def number_text(number: float) -> str:
    """A finite float as RFC 8785 writes it: ECMAScript's Number::toString (ECMA-262 7.1.12.1).

    Both pick the shortest digits that read back as the same double (Python's `repr`);
    they differ only in layout: ECMAScript writes no ".0", positional notation from
    1e-7 up to 1e21 exclusive, and an exponent without padding ("1e-7", "1e+21").
    """
    if number != number or number in (_INFINITY, -_INFINITY):
        raise _Unusual()
    if number == 0:
        return "0"  # -0 too
    if number < 0:
        return "-" + number_text(-number)
    text = repr(number)
    if "e" not in text:  # 1e-4 <= number < 1e16: Python is positional too
        return text[:-2] if text.endswith(".0") else text
    mantissa, exponent = text.split("e")
    exponent = int(exponent)
    digits = mantissa.replace(".", "")
    if 0 <= exponent < 21:  # an integer (at most 17 significant digits, so never a fraction here)
        return digits + "0" * (exponent + 1 - len(digits))
    if -7 < exponent < 0:
        return "0." + "0" * (-exponent - 1) + digits
    return f"{mantissa}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


_INFINITY = float("inf")


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _write(value: object, out: list) -> None:
    """Append the RFC 8785 text of `value` to `out`, a piece at a time (any exact JSON type)."""
    kind = type(value)
    if kind is str:
        out.append(_string(value))
    elif kind is dict:
        if not all(type(key) is str for key in value):
            raise _Unusual()
        keys = sorted(value)
        if any(not key.isascii() and max(key) > "\uffff" for key in keys):
            keys.sort(key=_utf16_order)  # past the BMP, UTF-16 code units order keys, not code points
        out.append("{")
        for n, key in enumerate(keys):
            out.append(_string(key) + ":" if n == 0 else "," + _string(key) + ":")
            _write(value[key], out)
        out.append("}")
    elif kind is list:
        out.append("[")
        for n, item in enumerate(value):
            if n:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif kind is float:
        out.append(number_text(value))
    elif kind is bool:
        out.append("true" if value else "false")
    elif value is None:
        out.append("null")
    elif kind is int and -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
        out.append(str(value))
    else:
        raise _Unusual()


def canonical_json_fast(value: object, *, plain: bool | None = None) -> bytes:
    """`canonical_json(value)`: the same bytes, several times faster.

    The audit chain hashes every row it writes and `verify_audit` re-hashes every
    row it reads (a million in under a minute), where the pure-Python reference
    encoder alone would take ~90 µs a row, and every inbox card sizes its args. The
    C JSON encoder produces the same bytes for plain values (see `_plain_json`);
    values with floats or keys past the BMP are written by `_write`; anything
    else (subclasses, tuples, lone surrogates, unsafe integers, NaN) by the
    reference, which also raises its errors. Property tests hold all of this equal
    to the reference on arbitrary JSON (tests/approvals/test_canonical_json.py). A
    caller that knows the answer of `is_plain_json(value)` for its fixed shape passes `plain`.
    """
    try:
        if _plain_json(value) if plain is None else plain:
            return _plain_text(value).encode("utf-8")
        out: list = []
        _write(value, out)
        return "".join(out).encode("utf-8")
    except (_Unusual, UnicodeEncodeError):
        # Anything unusual, or a lone surrogate: the reference encoder writes it or raises its own error.
        return rfc8785.dumps(value)
