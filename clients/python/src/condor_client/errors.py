"""What can go wrong, as typed exceptions that carry the server's stable error code.

Condor answers every error as ``{"error": "<code>", "detail": "<sentence>"}``;
branch on ``CondorError.code``, never on the sentence. The verdicts a human or the
policy gives (blocked, denied, expired, withdrawn) and the client's own wait limit get their
own classes, so an agent can tell "do something else" from "try later".
"""

from __future__ import annotations


class CondorError(Exception):
    """An error answer from Condor (``code`` is its ``error`` field) or a failure to reach it."""

    code = "error"

    def __init__(self, detail: str = "", *, code: str | None = None, status: int | None = None):
        super().__init__(detail or self.code)
        self.detail = detail
        if code is not None:
            self.code = code
        self.status = status


class ConnectionFailed(CondorError):
    """Condor could not be reached (after the retries that were safe to make)."""

    code = "connection_failed"


class Blocked(CondorError):
    """The policy gate refused the call outright: it must not run."""

    code = "blocked"

    def __init__(self, rule_id: str, explanation: str):
        super().__init__(f"{rule_id}: {explanation}")
        self.rule_id, self.explanation = rule_id, explanation


class Denied(CondorError):
    """A reviewer rejected the call (or declined the clarification); ``reason`` says why."""

    code = "approval_rejected"

    def __init__(self, reason: str | None, approval_id: str | None = None):
        super().__init__(reason or "The reviewer rejected this call.")
        self.reason, self.approval_id = reason, approval_id


class Expired(CondorError):
    """The approval ran out of time before it was decided or used."""

    code = "approval_expired"

    def __init__(self, approval_id: str | None = None, detail: str = ""):
        super().__init__(detail or "The approval has expired.")
        self.approval_id = approval_id


class TimedOut(CondorError):
    """No decision arrived within the client's wait; the approval is still open on the server."""

    code = "timed_out"

    def __init__(self, approval_id: str, timeout: float):
        super().__init__(f"No decision on approval {approval_id} within {timeout:g} s.")
        self.approval_id, self.timeout = approval_id, timeout


class RunEnded(CondorError):
    """The run ended (stopped, swept, superseded) while a call of it waited for a decision."""

    code = "run_not_active"


class Withdrawn(RunEnded):
    """The approval was withdrawn: its run was superseded, stopped or closed while the call waited.

    A ``RunEnded`` (the run is over, nothing of it can run), said by Condor itself: the
    approval's status is ``withdrawn`` and the stream's decision chunk says reason ``withdrawn``.
    """

    code = "approval_withdrawn"

    def __init__(self, approval_id: str | None = None, detail: str = ""):
        super().__init__(detail or "The approval was withdrawn: its run was superseded, stopped or closed.")
        self.approval_id = approval_id


def error_from_answer(status: int, body: object) -> CondorError:
    """The exception for a non-2xx answer ``body`` (``{"error", "detail"}`` when it is Condor's)."""
    code, detail = "error", ""
    if isinstance(body, dict):
        code = str(body.get("error") or code)
        detail = str(body.get("detail") or "")
    if code == "approval_expired":
        error: CondorError = Expired(detail=detail)
    elif code == "approval_rejected":
        error = Denied(detail)
    elif code == "approval_withdrawn":
        error = Withdrawn(detail=detail)
    else:
        error = CondorError(detail or f"HTTP {status}", code=code)
    error.status = status
    return error
