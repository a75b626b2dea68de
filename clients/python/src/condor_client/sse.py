"""Reading a run's stream (AI SDK v6 UI message stream over SSE) for one approval's decision.

Pure code, no I/O: the sync and async clients feed it the lines they read, so
both wait the same way. The server tags each chunk with an id
(``<event>.<frame>``); the watcher remembers the last one so a dropped
connection resumes with ``Last-Event-ID`` exactly after what was seen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

DECISION_CHUNK = "data-approval-decision"
DONE = "[DONE]"


@dataclass
class DecisionWatcher:
    """Feed it stream lines; ``feed`` returns the decision's data once its chunk arrives."""

    approval_id: str
    last_event_id: str | None = None
    done: bool = False  # the server said [DONE]: the run is terminal, nothing more will come
    _id: str | None = field(default=None, repr=False)
    _data: list[str] = field(default_factory=list, repr=False)

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id:
            headers["Last-Event-ID"] = self.last_event_id
        return headers

    def feed(self, line: str) -> dict | None:
        line = line.rstrip("\r\n")
        if line:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id" and "\0" not in value:
                self._id = value
            elif name == "data":
                self._data.append(value)
            return None  # comments (heartbeats) and other fields are ignored
        # A blank line dispatches the event.
        event_id, data = self._id, "\n".join(self._data)
        self._id, self._data = None, []
        if event_id is not None:
            self.last_event_id = event_id
        if data == DONE:
            self.done = True
            return None
        if not data:
            return None
        try:
            chunk = json.loads(data)
        except ValueError:
            return None
        if isinstance(chunk, dict) and chunk.get("type") == DECISION_CHUNK and chunk.get("id") == self.approval_id:
            decision = chunk.get("data")
            return decision if isinstance(decision, dict) else None
        return None


def decision_from_approval(approval: dict) -> dict | None:
    """The decision chunk's data rebuilt from an approval row (``GET approvals/{id}/``), if it is decided."""
    status = approval.get("status")
    if status in ("approved", "consumed"):
        return {
            "toolCallId": approval.get("tool_call_id"),
            "approved": True,
            "reason": approval.get("decision_reason") or None,
            "args": approval.get("approved_args"),
            "payloadHash": approval.get("payload_hash"),
        }
    if status == "rejected":
        return {
            "toolCallId": approval.get("tool_call_id"),
            "approved": False,
            "reason": approval.get("decision_reason") or None,
            "args": None,
            "payloadHash": None,
        }
    if status in ("expired", "withdrawn"):  # nobody decided: the chunk's reason is the status
        return {
            "toolCallId": approval.get("tool_call_id"),
            "approved": False,
            "reason": status,
            "args": None,
            "payloadHash": None,
        }
    return None
