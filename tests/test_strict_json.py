"""Strict JSON request bodies (SPEC section 4): refused with 400 invalid_payload before anything is stored.

Payload hashes are taken over RFC 8785 canonical JSON, so a body that has no single
canonical form (duplicate keys, NaN/Infinity, integers beyond ±(2^53−1), lone
surrogates) must never reach a service.
"""

import pytest

from approvals.models import ToolCall
from core.parsers import MAX_SAFE_INTEGER, StrictJSONError, loads_strict
from sessions_app.models import Session
from tests.helpers.approval_loop import assert_nothing_gated, gate, raw_gate
from tests.helpers.http import raw_post

SESSIONS = "/api/v1/sessions/"


def assert_invalid_payload(response, *, mentions: str = ""):
    assert response.status_code == 400, response.content
    body = response.json()
    assert set(body) == {"error", "detail"}
    assert body["error"] == "invalid_payload"
    assert mentions.lower() in body["detail"].lower()


# --- Through a real endpoint: POST sessions/ -------------------------------------------------


@pytest.mark.parametrize(
    "body, mentions",
    [
        ('{"title": "Ward 3", "title": "Ward 4"}', "duplicate key 'title'"),
        ('{"title": NaN}', "NaN"),
        ('{"title": Infinity}', "Infinity"),
        ('{"title": -Infinity}', "-Infinity"),
        ('{"title": 1e400}', "out of range"),
        (f'{{"title": {2**53}}}', str(2**53)),
        (f'{{"title": {-(2**53)}}}', str(-(2**53))),
    ],
)
def test_a_body_without_one_canonical_form_is_refused_and_nothing_stored(api, body, mentions):
    # Each of these would otherwise pass the serializer (a CharField takes numbers).
    assert_invalid_payload(raw_post(api, SESSIONS, body), mentions=mentions)
    assert not Session.objects.exists()


@pytest.mark.parametrize("body", ['{"title": "Ward 3"', '{"title": "Ward 3",}', "{'title': 'Ward 3'}"])
def test_malformed_json_is_refused(api, body):
    assert_invalid_payload(raw_post(api, SESSIONS, body), mentions="malformed")
    assert not Session.objects.exists()


@pytest.mark.parametrize("body", ['[{"title": "Ward 3"}]', '"Ward 3"', "42", "null", "true"])
def test_a_body_that_is_not_a_json_object_is_refused(api, body):
    assert_invalid_payload(raw_post(api, SESSIONS, body), mentions="JSON object")
    assert not Session.objects.exists()


def test_a_body_that_is_not_utf8_is_refused(api):
    assert_invalid_payload(raw_post(api, SESSIONS, b'{"title": "Ward \xff3"}'), mentions="UTF-8")
    assert not Session.objects.exists()


def test_a_utf16_body_is_refused_even_with_a_byte_order_mark(api):
    # json.loads(bytes) would quietly sniff UTF-16; JSON on the wire is UTF-8 (RFC 8259).
    assert_invalid_payload(raw_post(api, SESSIONS, '{"title": "Ward 3"}'.encode("utf-16")), mentions="UTF-8")
    assert not Session.objects.exists()


def test_a_lone_surrogate_is_refused(api):
    assert_invalid_payload(raw_post(api, SESSIONS, r'{"title": "Ward \ud800"}'), mentions="surrogate")
    assert not Session.objects.exists()


def test_absurdly_deep_nesting_is_refused_not_a_server_error(api):
    assert_invalid_payload(
        raw_post(api, SESSIONS, '{"title": ' + "[" * 100_000 + "]" * 100_000 + "}"), mentions="nested deeper than"
    )
    assert not Session.objects.exists()


def test_unknown_fields_are_refused_not_dropped(api):
    response = api.post(SESSIONS, {"title": "Ward 3", "approval_policy": "never"}, format="json")
    assert_invalid_payload(response, mentions="approval_policy")
    assert not Session.objects.exists()


def test_a_form_encoded_body_is_refused(api):
    response = api.generic("POST", SESSIONS, "title=Ward+3", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.json()["error"] == "invalid_payload"
    assert not Session.objects.exists()


def test_an_empty_body_creates_a_session_with_defaults(api):
    response = raw_post(api, SESSIONS, b"")
    assert response.status_code == 201
    assert Session.objects.get().autonomy == "guarded"


# --- Where big integers are legal: a tool call's args ----------------------------------------


@pytest.mark.parametrize("limit", [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER])
def test_the_largest_safe_integers_are_accepted_exactly(api, run_id, limit):
    response = gate(api, run_id, tool="search_patients", op="", args={"mrn": limit})
    assert response.status_code == 200, response.content
    assert response.json()["decision"] == "allow"
    assert ToolCall.objects.get(tool_call_id="call-1").args == {"mrn": limit}


@pytest.mark.parametrize(
    "args",
    [
        f'{{"mrn": {2**53}}}',
        f'{{"filters": [{{"mrn": {-(2**53)}}}]}}',
        '{"filters": {"ward": "3", "ward": "4"}}',
        '{"filters": [{"score": NaN}]}',
        '{"filters": [{"mrn": 9007199254740993.0}]}',
        '{"filters": {"n": 1e16}}',
        r'{"query": "\udc00"}',
    ],
)
def test_a_nested_problem_in_args_is_refused_before_the_gate(api, run_id, args):
    assert_invalid_payload(raw_gate(api, run_id, f'"args": {args}'))
    assert_nothing_gated()


# --- loads_strict on its own -----------------------------------------------------------------


def test_loads_strict_reads_ordinary_json():
    assert loads_strict(b'{"a": [1, 2.5, "x", true, null, {"b": -0}]}') == {"a": [1, 2.5, "x", True, None, {"b": 0}]}


def test_loads_strict_accepts_the_safe_integer_limits():
    assert loads_strict(f"[{2**53 - 1}, {-(2**53 - 1)}]") == [2**53 - 1, -(2**53 - 1)]


@pytest.mark.parametrize("text", [str(2**53), str(-(2**53)), str(10**30)])
def test_loads_strict_refuses_unsafe_integers(text):
    with pytest.raises(StrictJSONError, match="2\\^53"):
        loads_strict(text)


@pytest.mark.parametrize(
    "text",
    [
        "1.00000000000000001",
        "1e-400",
        "0.1000000000000000000001",
        '{"dose": [0.30000000000000000001]}',
        "0." + "0" * 400 + "1",
    ],
)
def test_loads_strict_refuses_a_number_a_double_cannot_hold_as_written(text):
    # It would be stored, shown and hashed as another number than the one sent.
    with pytest.raises(StrictJSONError, match="cannot be held exactly"):
        loads_strict(text)


@pytest.mark.parametrize(
    "text", ["9007199254740992.0", "9007199254740993.0", "-9007199254740993e0", "1e16", "1e300", "1.5e300"]
)
def test_loads_strict_refuses_a_number_beyond_the_safe_integers_however_written(text):
    # Stored as jsonb it would come back an integer the canonical JSON cannot write (verify_audit).
    with pytest.raises(StrictJSONError, match="2\\^53"):
        loads_strict(text)


@pytest.mark.parametrize("text", ["0e999999999999999999999", "1e-99999999999999999999999"])
def test_loads_strict_refuses_an_exponent_no_decimal_holds_with_a_400_not_a_500(text):
    with pytest.raises(StrictJSONError):
        loads_strict(text)


def test_loads_strict_keeps_numbers_a_double_holds_as_written():
    assert loads_strict(
        "[0.1, 2.50, -0.0, 1e15, 1.5e-7, 9007199254740991.0, 123456789.125, 0.10000000000000001, "
        "0.1000000000000000055511151231257827021181583404541015625]"
    ) == [0.1, 2.5, 0.0, 1e15, 1.5e-7, 2.0**53 - 1, 123456789.125, 0.1, 0.1]


@pytest.mark.parametrize("text", ['{"a": 1, "a": 1}', '[{"x": {"y": 1, "y": 2}}]'])
def test_loads_strict_refuses_duplicate_keys_at_any_depth(text):
    with pytest.raises(StrictJSONError, match="duplicate key"):
        loads_strict(text)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e400", "-1e400"])
def test_loads_strict_refuses_non_finite_numbers(text):
    with pytest.raises(StrictJSONError):
        loads_strict(text)


@pytest.mark.parametrize("text", [r'"\ud800"', r'{"\udfff": 1}', r'["ok", ["\ud83d"]]'])
def test_loads_strict_refuses_lone_surrogates(text):
    with pytest.raises(StrictJSONError, match="surrogate"):
        loads_strict(text)


def test_loads_strict_refuses_a_raw_lone_surrogate_in_text():
    with pytest.raises(StrictJSONError, match="surrogate"):
        loads_strict('["\ud800"]')


def test_loads_strict_accepts_an_escaped_surrogate_pair():
    assert loads_strict(r'"\ud83d\ude00"') == "\U0001f600"


def test_loads_strict_accepts_an_escaped_backslash_before_u_d800():
    assert loads_strict(r'"\\ud800"') == "\\ud800"


def test_loads_strict_refuses_bytes_that_are_not_utf8():
    with pytest.raises(UnicodeDecodeError):
        loads_strict('{"a": 1}'.encode("utf-16"))


def test_loads_strict_refuses_nesting_too_deep_to_parse():
    with pytest.raises(StrictJSONError, match="nested deeper than"):
        loads_strict("[" * 100_000 + "]" * 100_000)
