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

import rfc8785

CanonicalizationError = rfc8785.CanonicalizationError


def canonical_json(value: object) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value (dict, list, str, int, float, bool, None)."""
    return rfc8785.dumps(value)


def payload_hash(value: object) -> str:
    """SHA-256 hex digest (64 lowercase hex chars) of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
