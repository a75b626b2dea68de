"""Fold a run's persisted stream chunks into AI SDK v6 `UIMessage` parts.

History must show a gated call exactly as the stream said it, so it does not
re-derive anything from the approval rows: it reads the frames runs/frames.py
built and the outbox persisted, and applies them the way ai@6.0.0's
`processUIMessageStream` merges chunks into a message (one tool part per
toolCallId, last chunk wins; one data part per type and id). One step further
than a live client: a `data-approval-decision` also settles the tool part's
`approval` (`approval-responded`, or the reason on `output-denied`), because a
restored conversation has no reviewer click to replay.

Pure Python: the output is held to `validateUIMessages` by
tests/sessions_app/test_history.py.
"""

DECISION = "data-approval-decision"


def fold(chunks) -> list[dict]:
    """The message parts `chunks` (in stream order) leave behind, in the order they first appeared."""
    parts: list[dict] = []
    tools: dict[str, dict] = {}
    data: dict[tuple[str, str], dict] = {}
    for chunk in chunks:
        kind = chunk.get("type", "")
        call_id = chunk.get("toolCallId")
        if kind == "tool-input-available":
            part = tools.get(call_id)
            if part is None:
                part = tools[call_id] = {"toolCallId": call_id}
                parts.append(part)
            part.update(type=f"tool-{chunk['toolName']}", state="input-available", input=chunk.get("input"))
        elif kind.startswith("data-"):
            key = (kind, str(chunk.get("id", "")))
            if key not in data:
                data[key] = {"type": kind}
                parts.append(data[key])
            data[key].update({"id": key[1]} if "id" in chunk else {}, data=chunk.get("data"))
            if kind == DECISION:
                _decide(tools.get((chunk.get("data") or {}).get("toolCallId")), chunk)
        elif call_id in tools:
            _settle(tools[call_id], kind, chunk)
    return parts


def _approval(approval_id: str, approved: bool, reason) -> dict:
    # `reason` is an optional string in the 6.0.0 schema: leave it out rather than send null.
    return {
        "id": str(approval_id),
        "approved": approved,
        **({"reason": reason} if isinstance(reason, str) and reason else {}),
    }


def _decide(part, chunk) -> None:
    if part is None:
        return
    decision = chunk.get("data") or {}
    approved = bool(decision.get("approved"))
    if approved and part.get("state") == "approval-requested":
        part.update(state="approval-responded", approval=_approval(chunk["id"], True, decision.get("reason")))
    elif not approved:
        # Kept for the denial chunk that follows; a clarification part had no approval yet.
        part["approval"] = _approval(chunk.get("id", ""), False, decision.get("reason"))


def _settle(part, kind: str, chunk) -> None:
    if kind == "tool-approval-request":
        part.update(state="approval-requested", approval={"id": str(chunk["approvalId"])})
    elif kind == "tool-output-denied":
        approval = part.get("approval") or {"id": part["toolCallId"]}
        part.update(state="output-denied", approval={**approval, "approved": False})
    elif kind in ("tool-output-available", "tool-output-error"):
        if kind == "tool-output-available":
            part.update(state="output-available", output=chunk.get("output"))
        else:
            part.update(state="output-error", errorText=chunk.get("errorText") or "Tool call failed.")
        # An output may carry only a granted approval; a plain allowed call has none.
        if not (part.get("approval") or {}).get("approved"):
            part.pop("approval", None)
