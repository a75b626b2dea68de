"""Compact JSON text from the C encoder, made once.

`json.JSONEncoder.encode` makes a new C encoder on every call (with a dict for
spotting cycles, and a closure): a measurable share of the hot writers that call it
per value (payload hashes and audit rows, approvals/hashing.py; the session history,
sessions_app/history.py).
"""

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring


def _not_json(value):
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def compact_writer(*, sort_keys: bool) -> Callable[[object], str]:
    """value → its JSON text: compact, non-ASCII kept as is (as DRF's JSONRenderer writes), no NaN.

    No cycle check: for values that cannot hold one (parsed from JSON, or walked first).
    """
    if c_make_encoder is None:  # a Python without the C accelerator
        return json.JSONEncoder(ensure_ascii=False, sort_keys=sort_keys, separators=(",", ":"), allow_nan=False).encode
    encode = c_make_encoder(None, _not_json, encode_basestring, None, ":", ",", sort_keys, False, False)
    return lambda value: "".join(encode(value, 0))
