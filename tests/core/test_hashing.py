"""core.hashing: SHA-256 over RFC 8785 canonical JSON (SPEC section 4)."""

import hashlib
import json

import pytest
import rfc8785

from core.hashing import CanonicalizationError, canonical, canonical_json, payload_hash


def test_key_order_does_not_change_the_hash():
    assert payload_hash({"drug": "warfarin", "dose_mg": 2.5}) == payload_hash({"dose_mg": 2.5, "drug": "warfarin"})


def test_one_point_zero_and_one_hash_the_same():
    # RFC 8785 serialises numbers the ECMAScript way: 1.0 is written "1".
    assert canonical_json(1.0) == canonical_json(1) == b"1"
    assert payload_hash({"n": 1.0}) == payload_hash({"n": 1})


def test_negative_zero_and_zero_hash_the_same():
    assert canonical_json(-0.0) == b"0"
    assert payload_hash([-0.0]) == payload_hash([0])


def test_precomposed_and_decomposed_e_acute_differ():
    # RFC 8785 applies no Unicode normalisation (NFC): different code points, different hash.
    precomposed, decomposed = "\u00e9", "e\u0301"
    assert canonical_json(precomposed) == b'"\xc3\xa9"'
    assert canonical_json(decomposed) == b'"e\xcc\x81"'
    assert payload_hash({"name": precomposed}) != payload_hash({"name": decomposed})


def test_non_ascii_is_written_as_utf8_not_escaped():
    assert canonical_json("€") == '"€"'.encode()


def test_nested_objects_are_sorted_at_every_level():
    value = {"z": {"b": [1, {"y": 2, "x": 1}], "a": None}, "a": True}
    assert canonical_json(value) == b'{"a":true,"z":{"a":null,"b":[1,{"x":1,"y":2}]}}'


def test_array_order_matters():
    assert payload_hash({"ids": [1, 2]}) != payload_hash({"ids": [2, 1]})


def test_whitespace_and_escapes_in_the_source_text_do_not_matter():
    assert payload_hash(json.loads('{ "a" : "\\u0041" }')) == payload_hash({"a": "A"})


def test_true_and_1_hash_differently():
    # Python says True == 1; JSON does not.
    assert payload_hash([True]) != payload_hash([1])


@pytest.mark.parametrize(
    "number, text",
    [
        (1e21, b"1e+21"),
        (1e20, b"100000000000000000000"),
        (1e-6, b"0.000001"),
        (1e-7, b"1e-7"),
        (5e-324, b"5e-324"),
        (1.7976931348623157e308, b"1.7976931348623157e+308"),
        (2.0**60, b"1152921504606847000"),
        (2**53 - 1, b"9007199254740991"),
        (-(2**53 - 1), b"-9007199254740991"),
    ],
)
def test_numbers_use_ecmascript_serialisation(number, text):
    assert canonical_json(number) == text


def test_rfc8785_section_3_2_2_example():
    # Input and output are the worked example printed in RFC 8785 section 3.2.2.
    source = r"""{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }"""
    expected = (
        r"""{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"""
        r""""string":"€$\u000f\nA'B\"\\\\\"/"}"""
    ).encode()
    assert canonical_json(json.loads(source)) == expected
    # Known answer: sha256 of the bytes above, computed by hand with hashlib.
    assert payload_hash(json.loads(source)) == "2d5e01a318d0f0879ab568c4be289c8b1f64ef8921a53c6277d5e069978baacb"


def test_rfc8785_section_3_2_3_keys_sort_by_utf16_code_units():
    # U+1F600 is the surrogate pair D83D DE00, so it sorts BEFORE U+FB33 under
    # UTF-16 ordering (it would sort after it by code point).
    source = r"""{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }"""
    pairs = json.loads(canonical_json(json.loads(source)), object_pairs_hook=list)
    assert [value for _, value in pairs] == [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small Letter O With Diaeresis",
        "Euro Sign",
        "Emoji: Grinning Face",
        "Hebrew Letter Dalet With Dagesh",
    ]


@pytest.mark.parametrize(
    "value, canonical, digest",
    [
        ({}, b"{}", "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"),
        ([], b"[]", "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"),
        ({"b": 1, "a": "x"}, b'{"a":"x","b":1}', "cdab067e9f3beb32d1252cfd63e492592fecbf591b0d08cadb24bb17f3864246"),
        (
            {"patient": "p-17", "drug": "warfarin", "dose_mg": 2.50},
            b'{"dose_mg":2.5,"drug":"warfarin","patient":"p-17"}',
            "a06c8cbc960bbb6b4957a24b921c7d576af3b6703906b6892344ff8deee90da6",
        ),
    ],
)
def test_known_answers(value, canonical, digest):
    # The canonical bytes were written by hand from RFC 8785 and the digests computed
    # from those bytes with hashlib, independently of the rfc8785 package.
    assert canonical_json(value) == canonical
    assert hashlib.sha256(canonical).hexdigest() == digest
    assert payload_hash(value) == digest


def test_hash_is_64_lowercase_hex_chars():
    digest = payload_hash({"a": 1})
    assert len(digest) == 64 and digest == digest.lower() and int(digest, 16) >= 0


@pytest.mark.parametrize("number", [2**53, -(2**53), 10**20])
def test_integers_beyond_2_53_minus_1_raise(number):
    # The HTTP layer rejects such bodies with 400 invalid_payload before hashing;
    # here it surfaces as rfc8785.IntegerDomainError, a ValueError.
    with pytest.raises(rfc8785.IntegerDomainError):
        payload_hash({"n": number})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1: "a"}, "\ud800", {"a"}, b"x"])
def test_values_outside_json_raise_canonicalization_error(value):
    with pytest.raises(CanonicalizationError):
        payload_hash(value)
    assert issubclass(CanonicalizationError, ValueError)


@pytest.mark.parametrize("value", [{"drug": "amoxicillin", "days": 7}, {"dose": 5.0, "n": 1e-7}, ["\U0001f600"]])
def test_canonical_gives_the_reference_bytes_size_and_hash(value):
    reference = rfc8785.dumps(value)
    taken = canonical(value)
    assert (taken.size, taken.hash) == (len(reference), hashlib.sha256(reference).hexdigest())


def test_canonical_of_plain_json_skips_the_reference_encoder(monkeypatch):
    # A decision takes the canonical form of what is approved; for plain args the C encoder writes it.
    def refused(value):
        raise AssertionError("the reference encoder was asked")

    monkeypatch.setattr(rfc8785, "dumps", refused)
    assert canonical({"drug": "amoxicillin", "days": 7}).size == len('{"days":7,"drug":"amoxicillin"}')
