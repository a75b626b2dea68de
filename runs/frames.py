"""The one frame builder for the Vercel AI SDK v6 UI message stream.

Every chunk Condor sends over ``GET /api/v1/runs/{id}/stream`` is built here, both
for the live push at suspend time and for the replay on (re)connect, so the two can
never drift (SPEC section 5).

The ``ai@6.0.0`` client validates each chunk against a union of ``z.strictObject``
schemas: one unknown key, a missing required key, or a ``null`` where the schema
says "optional string" makes ``DefaultChatTransport`` error the WHOLE stream. So the
builders return exactly the 6.0.0 keys and leave optional keys out rather than
sending ``null``. tests/runs/ai_sdk_chunk_schemas.json is the transcription the
tests hold these shapes to; tests/runs/test_ai_sdk_harness.py feeds them to the
real client.

Why a parked call never gets an error chunk before the human decides
(seed hitl-fix-park-not-reject, F-024): the client merges every chunk for a
toolCallId into ONE tool part, and the last chunk wins. A runner that "parked" a
call by rejecting it produced a ``tool-output-error`` on the same toolCallId as
the ``tool-approval-request``; the part flipped from ``approval-requested`` to
``output-error``, the Approve/Reject card vanished and the run looked auto-denied.
The approval request must stay the last word for that toolCallId until a decision
exists; only then does ``denied_frames`` or ``result_frames`` follow it.

Pure Python on purpose (no Django imports) so the wire contract is testable alone.
"""

import json

REASON_APPROVAL = "approval"
REASON_CLARIFICATION = "clarification"


def start(message_id: str) -> dict:
    return {"type": "start", "messageId": str(message_id)}


def start_step() -> dict:
    return {"type": "start-step"}


def finish_step() -> dict:
    return {"type": "finish-step"}


def finish() -> dict:
    return {"type": "finish"}


def tool_input_available(tool_call_id: str, tool_name: str, input) -> dict:
    # str(): zod wants strings, and our ids may be UUID/int primary keys.
    return {
        "type": "tool-input-available",
        "toolCallId": str(tool_call_id),
        "toolName": str(tool_name),
        "input": input,
    }


def suspend_frames(
    *,
    approval_id: str,
    tool_call_id: str,
    tool_name: str,
    input,
    reason_code: str,
    message: str | None = None,
    schema: dict | None = None,
) -> list[dict]:
    """The two chunks that show a suspend, always both and in this order.

    The first opens the tool part: ``tool-approval-request`` (and anything else
    keyed by toolCallId) on a toolCallId the client has not seen throws
    "no tool invocation found" and kills the stream. ``message``/``schema`` only
    ride on a clarification; the strict ``tool-approval-request`` chunk has no room
    for them, so an approval card gets its text from the approval row instead.
    """
    opening = tool_input_available(tool_call_id, tool_name, input)
    if reason_code == REASON_APPROVAL:
        second = {
            "type": "tool-approval-request",
            "approvalId": str(approval_id),
            "toolCallId": str(tool_call_id),
        }
    elif reason_code == REASON_CLARIFICATION:
        # `data` is z.unknown(), so nulls inside it are allowed; keeping all three
        # keys gives the form renderer one stable shape.
        second = {
            "type": "data-clarification",
            "id": str(approval_id),
            "data": {"toolCallId": str(tool_call_id), "message": message, "schema": schema},
        }
    else:
        raise ValueError(f"unknown suspend reason_code: {reason_code!r}")
    return [opening, second]


def denied_frames(tool_call_id: str) -> list[dict]:
    return [{"type": "tool-output-denied", "toolCallId": str(tool_call_id)}]


# The reason an expiry carries in its decision chunk (SPEC section 5), and a withdrawal: the
# card's run was superseded, stopped or closed while it was open.
EXPIRED_REASON = "expired"
WITHDRAWN_REASON = "withdrawn"


def decision_frames(
    *,
    approval_id: str,
    tool_call_id: str,
    approved: bool,
    reason: str | None,
    args: dict | None,
    payload_hash: str | None,
    bound_context: dict | None = None,
) -> list[dict]:
    """What a human (or the clock) decided, so an agent waiting on the stream needs no second request.

    ``args`` are what the agent must run — the edited args after an edit — and
    ``payload_hash`` is theirs; both are ``None`` when nothing may run. A denial
    (rejection, declined clarification, expiry) is followed by
    ``tool-output-denied``, which settles the tool part on the client; an approval
    leaves the part open for the result the agent reports after resuming.
    ``data`` is ``z.unknown()`` in ai 6.0.0, so its keys are ours; the chunk's own
    keys are exactly the strict data-chunk keys. ``bound_context`` (``{patientRef, ageBand,
    consent}``): the patient context the approval was given for, which a resume must still
    find in the session.
    """
    data = {
        "toolCallId": str(tool_call_id),
        "approved": bool(approved),
        "reason": reason or None,
        "args": args if approved else None,
        "payloadHash": payload_hash if approved else None,
    }
    if bound_context is not None:
        data["boundContext"] = bound_context
    decision = {"type": "data-approval-decision", "id": str(approval_id), "data": data}
    return [decision] if approved else [decision, *denied_frames(tool_call_id)]


def result_frames(tool_call_id: str, output, is_error: bool = False) -> list[dict]:
    if not is_error:
        # `output` is z.unknown() but REQUIRED: a None output is sent as null, not dropped.
        return [{"type": "tool-output-available", "toolCallId": str(tool_call_id), "output": output}]
    return [{"type": "tool-output-error", "toolCallId": str(tool_call_id), "errorText": _error_text(output)}]


def allowed_call_frames(tool_call_id: str, tool_name: str, input) -> list[dict]:
    """Open the part for a call the policy allowed straight away, so its later
    result has a part to attach to (an orphan result errors the stream)."""
    return [tool_input_available(tool_call_id, tool_name, input)]


def _error_text(output) -> str:
    # errorText must be a non-null string; prefer a human message if the tool gave one.
    if isinstance(output, str) and output:
        return output
    if isinstance(output, dict):
        for key in ("error", "message", "detail"):
            if isinstance(output.get(key), str) and output[key]:
                return output[key]
    if output is None or output == "":
        return "Tool call failed."
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"), default=str)
