"""core.hashing.canonical_json_fast writes exactly what the rfc8785 package writes.

Payload hashes, the audit chain and the inbox cards' args sizes all go through the fast
form; the reference (`canonical_json`, the rfc8785 package) is the oracle. Floats are
where the two could part (ECMAScript number layout), so they get the most examples.
"""

import hashlib
import math

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import chain as audit_chain
from core.hashing import canonical_json, canonical_json_fast, payload_hash

# Every finite double, and the ones at ECMAScript's layout boundaries written out.
_BOUNDARIES = [
    1e-7,
    1e-6,
    9.999999999999999e-7,
    1e-5,
    9.99e-5,
    1e-4,
    0.00012,
    0.1,
    1.0,
    1.5,
    1e15,
    1e16,
    1.2345678901234567e16,
    2.0**52 + 0.5,
    2.0**53,
    2.0**53 + 2,
    2.0**60,
    1e20,
    1e21,
    1.5e21,
    1e22,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    123456789012345680000.0,
]
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**63), 2**63).map(float),  # integer-valued: "5", never "5.0"
    st.builds(lambda digits, exponent: digits * 10.0**exponent, st.integers(-99999, 99999), st.integers(-30, 30)),
    st.sampled_from(_BOUNDARIES + [-x for x in _BOUNDARIES] + [0.0, -0.0]),
)
# Any text: control characters, quotes and backslashes, the BMP's top (U+E000–U+FFFF, which
# sorts after the astral planes in UTF-16), and the astral planes themselves.
text = st.text(
    st.one_of(
        st.characters(exclude_categories=("Cs",)),
        st.sampled_from('"\\\x00\x1f\x7f\u2028\ue000\uffff'),
        st.characters(min_codepoint=0x10000),
    ),
    max_size=10,
)
scalars = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | floats | text
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(text, inner, max_size=5), max_leaves=25
)


@settings(max_examples=1000, deadline=None)
@given(floats)
def test_every_float_is_written_as_the_reference_writes_it(number):
    assert canonical_json_fast(number) == rfc8785.dumps(number)


@pytest.mark.parametrize(
    "number, text",
    [
        (5.0, "5"),
        (-0.0, "0"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1.5e-5, "0.000015"),
        (1e16, "10000000000000000"),
        (2.0**60, "1152921504606847000"),
        (1e21, "1e+21"),
        (-1.5e-7, "-1.5e-7"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (72.4, "72.4"),
    ],
)
def test_floats_use_ecmascript_layout(number, text):
    assert canonical_json_fast(number) == text.encode() == canonical_json(number)


@settings(max_examples=600, deadline=None)
@given(json_values)
def test_any_json_value_is_written_as_the_reference_writes_it(value):
    assert canonical_json_fast(value) == rfc8785.dumps(value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(text, floats | text, min_size=2, max_size=6))
def test_keys_sort_by_utf16_code_units_past_the_bmp_too(value):
    assert canonical_json_fast(value) == rfc8785.dumps(value)


def test_a_key_past_the_bmp_sorts_before_the_bmps_top():
    # U+1F600 is D83D DE00 in UTF-16, before U+E000; by code point it would come after.
    value = {"\ue000": 1.5, "\U0001f600": 2.0}
    assert canonical_json_fast(value) == '{"\U0001f600":2,"\ue000":1.5}'.encode() == canonical_json(value)


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        {"dose": math.nan},
        [1.5, math.inf],
        2**53,
        {"n": -(2**53)},
        "\ud800",
        {"\udc00": 1.5},
        [0.5, "\ud83d"],
        {1: 1.5},
        {"a": {2.5}},
        b"x",
    ],
)
def test_what_the_reference_refuses_is_refused_alike(value):
    # Mostly its CanonicalizationError; a lone surrogate in a key is a UnicodeEncodeError (both ValueErrors).
    with pytest.raises(ValueError) as expected:
        rfc8785.dumps(value)
    with pytest.raises(type(expected.value)):
        canonical_json_fast(value)


@pytest.mark.parametrize("value", [(1.5, "a"), {"a": (2, 0.5)}, [True, 1.0], {"k": False}])
def test_what_only_the_reference_accepts_it_still_writes(value):
    # Tuples and bool-valued edge cases take the reference's own path, with its own answer.
    assert canonical_json_fast(value) == rfc8785.dumps(value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(text, json_values, max_size=4), st.integers(1, 2**40))
def test_audit_row_hashes_are_the_reference_hashes(data, seq):
    # verify_audit must agree with the reference's bytes, in both versions a chain may hold.
    values = (
        "run:1",
        seq,
        "0" * 64,
        "2026-12-01T23:00:00.000000+00:00",
        "verdict",
        "client:ward",
        7,
        None,
        "s-1",
        "r-1",
        None,
        "MRN-1",
        "ehr.order",
        "create",
        "require_approval",
        "rule-1",
        data,
    )
    body = {
        "chain": "run:1",
        "at": values[3],
        "kind": "verdict",
        "actor": "client:ward",
        "actor_user_id": 7,
        "actor_client_id": None,
        "session_id": "s-1",
        "run_id": "r-1",
        "approval_id": None,
        "patient_ref": "MRN-1",
        "tool": "ehr.order",
        "op": "create",
        "decision": "require_approval",
        "rule_id": "rule-1",
        "data": data,
    }
    body_digest = hashlib.sha256(rfc8785.dumps({"v": 2, **body})).hexdigest()
    assert audit_chain.row_hash(values) == hashlib.sha256(f"{'0' * 64}:{seq}:{body_digest}".encode()).hexdigest()
    v1 = {"v": 1, "seq": seq, "prev_hash": "0" * 64, **body}
    assert audit_chain.v1_hash(values) == hashlib.sha256(rfc8785.dumps(v1)).hexdigest()


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_payload_hashes_are_the_reference_hashes(value):
    assert payload_hash(value) == hashlib.sha256(rfc8785.dumps(value)).hexdigest()
