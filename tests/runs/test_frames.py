"""Frame shapes against the ai@6.0.0 chunk schemas, and the SSE encoding helpers.

Pure: runs without Django settings (`pytest -p no:django tests/runs/test_frames.py`).
"""

import json
from pathlib import Path

import jsonschema
import pytest

from runs import frames, sse

SCHEMA = json.loads((Path(__file__).parent / "ai_sdk_chunk_schemas.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

CLARIFY_SCHEMA = {"type": "object", "properties": {"dose_mg": {"type": "number"}}, "required": ["dose_mg"]}


def approval_suspend():
    return frames.suspend_frames(
        approval_id="apr_1",
        tool_call_id="call_1",
        tool_name="prescribe",
        input={"drug": "amoxicillin"},
        reason_code="approval",
    )


def clarification_suspend():
    return frames.suspend_frames(
        approval_id="apr_2",
        tool_call_id="call_2",
        tool_name="prescribe",
        input={"drug": "amoxicillin"},
        reason_code="clarification",
        message="Which dose?",
        schema=CLARIFY_SCHEMA,
    )


def every_frame():
    return [
        frames.start("msg_1"),
        frames.start_step(),
        frames.tool_input_available("call_0", "lookup", {"q": "x"}),
        *approval_suspend(),
        *clarification_suspend(),
        *frames.denied_frames("call_1"),
        *frames.decision_frames(
            approval_id="apr_1",
            tool_call_id="call_1",
            approved=True,
            reason=None,
            args={"drug": "amoxicillin"},
            payload_hash="ab" * 32,
        ),
        *frames.decision_frames(
            approval_id="apr_1", tool_call_id="call_1", approved=False, reason="Allergy.", args=None, payload_hash=None
        ),
        *frames.result_frames("call_2", {"ok": True}),
        *frames.result_frames("call_2", None),
        *frames.result_frames("call_2", {"error": "FHIR timeout"}, is_error=True),
        *frames.allowed_call_frames("call_3", "lookup", {}),
        frames.finish_step(),
        frames.finish(),
    ]


@pytest.mark.parametrize("frame", every_frame(), ids=lambda f: f["type"])
def test_every_frame_validates_against_the_6_0_0_schema(frame):
    VALIDATOR.validate(frame)


@pytest.mark.parametrize("frame", every_frame(), ids=lambda f: f["type"])
def test_an_extra_key_is_refused(frame):
    # The schema itself must be able to fail, or the test above proves nothing.
    assert not VALIDATOR.is_valid({**frame, "toolName": "x", "zzz": 1})


def test_the_schema_refuses_the_old_suspend_sentinel_shape():
    # The pre-fix shape from the seed: toolName is not a tool-output-available key.
    assert not VALIDATOR.is_valid(
        {"type": "tool-output-available", "toolCallId": "c", "toolName": "__suspend__", "output": {}}
    )


def test_the_schema_refuses_null_for_an_optional_string():
    assert not VALIDATOR.is_valid({"type": "start", "messageId": None})


def test_the_schema_requires_unknown_typed_keys():
    # zod v4 treats z.unknown() keys as required: a missing `output` is refused.
    assert not VALIDATOR.is_valid({"type": "tool-output-available", "toolCallId": "c"})


def test_approval_suspend_opens_the_part_then_requests_approval():
    opening, request = approval_suspend()
    assert opening == {
        "type": "tool-input-available",
        "toolCallId": "call_1",
        "toolName": "prescribe",
        "input": {"drug": "amoxicillin"},
    }
    assert request == {"type": "tool-approval-request", "approvalId": "apr_1", "toolCallId": "call_1"}


def test_clarification_suspend_carries_message_and_schema():
    opening, clarification = clarification_suspend()
    assert opening["type"] == "tool-input-available"
    assert opening["toolCallId"] == "call_2"
    assert clarification == {
        "type": "data-clarification",
        "id": "apr_2",
        "data": {"toolCallId": "call_2", "message": "Which dose?", "schema": CLARIFY_SCHEMA},
    }


def test_clarification_without_message_or_schema_keeps_a_stable_shape():
    _, clarification = frames.suspend_frames(
        approval_id="a",
        tool_call_id="c",
        tool_name="t",
        input={},
        reason_code="clarification",
    )
    assert clarification["data"] == {"toolCallId": "c", "message": None, "schema": None}
    VALIDATOR.validate(clarification)


def test_an_unknown_reason_code_is_refused():
    with pytest.raises(ValueError):
        frames.suspend_frames(approval_id="a", tool_call_id="c", tool_name="t", input={}, reason_code="nope")


def test_suspend_frames_never_carry_an_error_for_the_parked_call():
    for frame in approval_suspend() + clarification_suspend():
        assert frame["type"] not in ("tool-output-error", "tool-output-denied", "tool-output-available")


def test_ids_are_sent_as_strings():
    import uuid

    approval_id = uuid.uuid4()
    _, request = frames.suspend_frames(
        approval_id=approval_id,
        tool_call_id=7,
        tool_name="t",
        input={},
        reason_code="approval",
    )
    assert request == {"type": "tool-approval-request", "approvalId": str(approval_id), "toolCallId": "7"}


@pytest.mark.parametrize(
    "output, text",
    [
        ("boom", "boom"),
        ({"error": "FHIR timeout", "code": 504}, "FHIR timeout"),
        ({"message": "bad dose"}, "bad dose"),
        (None, "Tool call failed."),
        ({"code": 504}, '{"code":504}'),
        (["é"], '["é"]'),
    ],
)
def test_error_text_is_a_readable_string(output, text):
    (frame,) = frames.result_frames("c", output, is_error=True)
    assert frame == {"type": "tool-output-error", "toolCallId": "c", "errorText": text}


def test_encode_writes_id_and_compact_json():
    chunk = {"type": "data-clarification", "id": "a", "data": {"message": "Dosis für Kind?"}}
    assert (
        sse.encode(chunk, "12.1")
        == ('id: 12.1\ndata: {"type":"data-clarification","id":"a","data":{"message":"Dosis für Kind?"}}\n\n').encode()
    )


def test_encode_without_an_id_writes_only_data():
    assert sse.encode({"type": "start-step"}, None) == b'data: {"type":"start-step"}\n\n'


def test_no_payload_can_break_a_frame():
    payload = sse.encode({"type": "data-x", "data": "line1\nline2\r\n\u2028\x00end"}, "1.0")
    body = payload[: -len(b"\n\n")]
    assert b"\r" not in body
    assert body.count(b"\n") == 1  # only the one between the id and data lines
    assert json.loads(body.split(b"\ndata: ", 1)[1])["data"] == "line1\nline2\r\n\u2028\x00end"


@pytest.mark.parametrize("bad", ["1.0\n", "1\r.0", "1\x00"])
def test_encode_refuses_an_event_id_that_would_break_the_frame(bad):
    with pytest.raises(ValueError):
        sse.encode({"type": "finish"}, bad)


def test_heartbeat_is_an_sse_comment():
    beat = sse.heartbeat()
    assert beat.startswith(b":") and beat.endswith(b"\n\n") and beat.count(b"\n") == 2


def test_done_and_headers():
    assert sse.DONE == b"data: [DONE]\n\n"
    assert sse.STREAM_HEADERS == {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-vercel-ai-ui-message-stream": "v1",
        "x-accel-buffering": "no",
    }


@pytest.mark.parametrize(
    "value, parsed",
    [("12.3", (12, 3)), ("0.0", (0, 0)), (" 7.1 ", (7, 1)), (sse.event_id(40, 2), (40, 2))],
)
def test_parse_last_event_id(value, parsed):
    assert sse.parse_last_event_id(value) == parsed


@pytest.mark.parametrize(
    "value", [None, "", "12", "12.", ".3", "-1.0", "1.-2", "1.2.3", "a.b", "1.2x", "١.٢", "².1", "9" * 40 + ".1"]
)
def test_garbage_last_event_id_is_none(value):
    assert sse.parse_last_event_id(value) is None
