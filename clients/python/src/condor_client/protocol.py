"""What each client operation says to Condor and how it reads the answers, written once.

Every operation is a generator that yields what it needs done — a ``Call`` (one
HTTP request) or a ``Wait`` (read the run's stream until one approval is
decided) — and receives the result. The sync client drives it with plain calls,
the async client with awaits (``drive`` / ``drive_async`` in the transports), so
the two can never disagree about the protocol.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from condor_client.errors import Blocked, Denied, Expired, Withdrawn, error_from_answer

# The reasons a decision chunk gives when nobody decided: the card ran out, or its run ended.
CLOSED_REASONS = {"expired": Expired, "withdrawn": Withdrawn}


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: dict | None = None
    # Set on requests that are safe to send again (resume): retried on network
    # errors, and the server replays its first answer for the same key and body.
    idempotency_key: str | None = None


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any


@dataclass(frozen=True)
class Wait:
    run_id: str
    approval_id: str
    timeout: float


Step = Call | Wait
Flow = Generator[Step, Any, Any]


class Allowed(dict):
    """The arguments to run (a dict), with where they came from.

    After an approval they are the approved ones, which may be a reviewer's edit
    of what was asked: run these, not the originals.
    """

    def __init__(
        self, args: dict, *, tool_call_id: str, rule_id: str, approval_id: str | None = None, values: dict | None = None
    ):
        super().__init__(args)
        self.tool_call_id, self.rule_id, self.approval_id = tool_call_id, rule_id, approval_id
        self.values = values  # a clarification's answers


def expect(answer: Answer, *statuses: int) -> Any:
    if answer.status not in statuses:
        raise error_from_answer(answer.status, answer.body)
    return answer.body


def _present(**fields) -> dict:
    return {name: value for name, value in fields.items() if value is not None}


def open_session(**fields) -> Flow:
    return expect((yield Call("POST", "sessions/", _present(**fields))), 201)


def open_run(session_id: str, **fields) -> Flow:
    run = expect((yield Call("POST", f"sessions/{session_id}/runs/", _present(**fields))), 201)
    return expect((yield Call("POST", f"runs/{run['id']}/transition/", {"to": "executing"})), 200)


def close_run(run_id: str, reason: str, summary: str | None = None) -> Flow:
    return expect((yield Call("POST", f"runs/{run_id}/close/", _present(reason=reason, summary=summary))), 200)


def get_approval(approval_id: str) -> Flow:
    return expect((yield Call("GET", f"approvals/{approval_id}/")), 200)


class Ids:
    """Tool call and step ids for one run: unique, readable in the inbox and the audit log."""

    def __init__(self):
        self._steps = itertools.count(1)
        self._prefix = uuid.uuid4().hex[:8]

    def call_id(self) -> str:
        return f"call-{self._prefix}-{uuid.uuid4().hex[:8]}"

    def step_id(self) -> str:
        return f"step-{next(self._steps)}"


class Parked:
    """A call Condor parked for a reviewer, not yet decided: ``approval`` is its card as the inbox shows it.

    What ``Run.ask`` returns instead of waiting, for a framework that suspends the
    agent itself (a LangGraph ``interrupt()``): wait for the decision with
    ``Run.decision`` when it suits, and hand it to ``Run.resume``.
    """

    def __init__(self, approval: dict):
        self.approval = approval
        self.approval_id, self.tool_call_id = str(approval["id"]), approval["tool_call_id"]

    def __repr__(self) -> str:
        return f"Parked(approval_id={self.approval_id!r}, tool={self.approval.get('tool')!r})"


def with_rationale(metadata: dict | None, rationale: str | None) -> dict | None:
    """The call's metadata with `rationale` (why the agent wants the call: the card shows it) set."""
    if rationale is None:
        return metadata
    if not isinstance(rationale, str):
        raise TypeError(f"rationale must be a string, not {type(rationale).__name__}")
    return {**(metadata or {}), "rationale": rationale}


def ask(
    run_id: str,
    ids: Ids,
    tool: str,
    args: dict,
    *,
    op: str | None,
    tool_call_id: str | None = None,
    step_id: str | None = None,
    metadata: dict | None = None,
    rationale: str | None = None,
) -> Flow:
    """Allowed args, Blocked, or Parked: the gate's verdict, without waiting for a reviewer."""
    tool_call_id = tool_call_id or ids.call_id()
    body = _present(
        tool_call_id=tool_call_id,
        step_id=step_id or ids.step_id(),
        tool=tool,
        op=op or "",
        args=args,
        metadata=with_rationale(metadata, rationale),
    )
    answer = yield Call("POST", f"runs/{run_id}/tool-calls/", body)
    verdict = expect(answer, 200, 202)
    if answer.status == 202:
        return Parked(verdict["approval"])
    if verdict["decision"] != "allow":
        raise Blocked(verdict["rule_id"], verdict["explanation"])
    return Allowed(
        verdict["args"], tool_call_id=tool_call_id, rule_id=verdict["rule_id"], approval_id=verdict.get("approval_id")
    )


def gate(
    run_id: str,
    ids: Ids,
    tool: str,
    args: dict,
    *,
    op: str | None,
    timeout: float,
    tool_call_id: str | None = None,
    step_id: str | None = None,
    metadata: dict | None = None,
    rationale: str | None = None,
) -> Flow:
    """Allowed args, or Blocked / Denied / Expired / TimedOut; a suspend is waited out and resumed."""
    asked = yield from ask(
        run_id,
        ids,
        tool,
        args,
        op=op,
        tool_call_id=tool_call_id,
        step_id=step_id,
        metadata=metadata,
        rationale=rationale,
    )
    if isinstance(asked, Allowed):
        return asked
    return (yield from resume(run_id, asked.approval_id, (yield Wait(run_id, asked.approval_id, timeout))))


def clarify(
    run_id: str,
    ids: Ids,
    tool: str,
    message: str,
    missing: list,
    *,
    args: dict | None,
    op: str | None,
    timeout: float,
    tool_call_id: str | None = None,
    step_id: str | None = None,
) -> Flow:
    """The reviewer's answers (``values``) to a question about ``tool``'s call."""
    body = _present(
        tool_call_id=tool_call_id or ids.call_id(),
        step_id=step_id or ids.step_id(),
        tool=tool,
        op=op,
        message=message,
        args=args,
        missing=[{"name": field} if isinstance(field, str) else field for field in missing],
    )
    answer = yield Call("POST", f"runs/{run_id}/clarifications/", body)
    verdict = expect(answer, 200, 202)
    if answer.status == 200:  # a client that cannot park is told so, never shown a form
        raise Blocked(verdict["rule_id"], verdict["explanation"])
    approval_id = verdict["approval"]["id"]
    allowed = yield from resume(run_id, approval_id, (yield Wait(run_id, approval_id, timeout)))
    return allowed.values


def wait_for_decision(run_id: str, approval_id: str, timeout: float) -> Flow:
    return (yield Wait(run_id, approval_id, timeout))


def resume(run_id: str, approval_id: str, decision: dict) -> Flow:
    """The approved args (an Allowed; ``.values`` after a clarification), or Denied / Expired / Withdrawn."""
    if not decision.get("approved"):
        # An expiry's chunk says reason "expired", a withdrawal's "withdrawn"; so does a rejection whose
        # reviewer wrote just that. Only then is the approval asked which it was.
        reason = decision.get("reason")
        closed = CLOSED_REASONS.get(reason) if isinstance(reason, str) else None
        if closed is not None and (yield from get_approval(approval_id))["status"] == reason:
            raise closed(approval_id)
        raise Denied(reason, approval_id)
    # The key is the approval's own: whoever resumes it, however often, asks the same question.
    # Condor checks the args against what the reviewer approved (409 payload_mismatch otherwise).
    answer = yield Call(
        "POST",
        f"runs/{run_id}/resume/",
        {"approval_id": approval_id, "args": decision["args"]},
        idempotency_key=f"resume-{approval_id}",
    )
    resumed = expect(answer, 200)
    approval = resumed["approval"]
    return Allowed(
        resumed["args"],
        tool_call_id=approval["tool_call_id"],
        rule_id=approval["rule_id"],
        approval_id=str(approval_id),
        values=resumed.get("values"),
    )


def message_parts(text: str | None, parts: list | None) -> list:
    """A message's AI SDK parts: given, or one text part."""
    if (text is None) == (parts is None):
        raise TypeError("A message takes its text or its parts, not both nor neither.")
    return parts if parts is not None else [{"type": "text", "text": text}]


def append_message(
    session_id: str, role: str, parts: list, *, run_id: str | None = None, message_id: str | None = None
) -> Flow:
    body = _present(id=message_id, role=role, parts=parts, run=run_id)
    return expect((yield Call("POST", f"sessions/{session_id}/messages/", body)), 201)


def report(run_id: str, tool_call_id: str, output: Any, *, untrusted: bool = False, is_error: bool = False) -> Flow:
    body = {"output": output, "untrusted": untrusted, "is_error": is_error}
    return expect((yield Call("POST", f"runs/{run_id}/tool-calls/{tool_call_id}/result/", body)), 200)
