"""Every error Condor answers with, and the one place they become HTTP.

Services raise these; the DRF exception handler below turns any of them (and
DRF's own exceptions) into `{"error": "<stable code>", "detail": "<sentence>"}`.
Clients branch on `error`, never on `detail`.
"""

import logging
import math

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class CondorError(Exception):
    status = 400
    code = "invalid_payload"
    default_detail = "The request is not valid."

    def __init__(self, detail: str | None = None):
        self.detail = detail or self.default_detail
        super().__init__(self.detail)


class InvalidPayload(CondorError):
    status, code = 400, "invalid_payload"
    default_detail = "The request body is not valid."


class NotFound(CondorError):
    status, code = 404, "not_found"
    default_detail = "No such object."


class RunStateTransitionError(CondorError):
    status, code = 409, "run_state_transition"
    default_detail = "That state change is not allowed for this run."


class RunNotSuspendedError(CondorError):
    status, code = 409, "run_not_suspended"
    default_detail = "The run is not suspended."


class RunNotActiveError(CondorError):
    status, code = 409, "run_not_active"
    default_detail = "The run is not executing or suspended."


class ToolCallConflict(CondorError):
    status, code = 409, "tool_call_conflict"
    default_detail = "This tool call id was already gated with another tool, op or arguments."


class ToolCallNotAllowed(CondorError):
    status, code = 409, "tool_call_not_allowed"
    default_detail = "This tool call was not allowed to run, so it has no result to report."


class ToolResultAlreadyReported(CondorError):
    status, code = 409, "tool_result_already_reported"
    default_detail = "A result for this tool call was already reported."


class ApprovalPending(CondorError):
    status, code = 409, "approval_pending"
    default_detail = "The approval has not been decided yet."


class ApprovalRejected(CondorError):
    status, code = 409, "approval_rejected"
    default_detail = "The approval was rejected."


class ApprovalConsumed(CondorError):
    status, code = 409, "approval_consumed"
    default_detail = "The approval has already been used."


class PayloadMismatch(CondorError):
    status, code = 409, "payload_mismatch"
    default_detail = "The arguments differ from what was approved."


class ApprovalNotPending(CondorError):
    status, code = 409, "approval_not_pending"
    default_detail = "The approval was already decided or has expired."


class ApprovalClaimed(CondorError):
    status, code = 409, "approval_claimed"
    default_detail = "Another reviewer is working on this approval."


class AlreadyApprovedByYou(CondorError):
    status, code = 409, "already_approved_by_you"
    default_detail = "You have already approved this payload; another reviewer must approve it too."


class PayloadChanged(CondorError):
    status, code = 409, "payload_changed"
    default_detail = (
        "The arguments on this card changed since you saw them (another reviewer edited them); review the card again."
    )


class FullArgsNotViewed(CondorError):
    status, code = 409, "full_args_not_viewed"
    default_detail = "This card's arguments were too long to show whole: load them all before approving."


class ContextChanged(CondorError):
    status, code = 409, "context_changed"
    default_detail = (
        "The session's patient context (patient_ref, age band or consent) is no longer the one "
        "the approval was given for; gate the call again."
    )


class PolicyChanged(CondorError):
    status, code = 409, "policy_changed"
    default_detail = "The tool registry or its egress allow-list now blocks this call; it may not run."


class LockedArg(CondorError):
    status, code = 400, "locked_arg"
    default_detail = "An edit may not change an argument that names the patient."


class ApprovalExpired(CondorError):
    status, code = 410, "approval_expired"
    default_detail = "The approval has expired."


class ApprovalWithdrawn(CondorError):
    status, code = 410, "approval_withdrawn"
    default_detail = "The approval was withdrawn: its run was superseded, stopped or closed while it was open."


class ResumeSchemaRejected(CondorError):
    status, code = 422, "resume_schema_rejected"
    default_detail = "The decision does not match the approval's resume schema."


class BulkHighRisk(CondorError):
    status, code = 422, "bulk_high_risk"
    default_detail = (
        "Only low-risk approval cards may be decided in bulk: decide the others one by one. Nothing was decided."
    )


class BulkTooLarge(CondorError):
    status, code = 400, "bulk_too_large"
    default_detail = "Too many cards for one bulk decision. Nothing was decided."


class PayloadTooLarge(CondorError):
    status, code = 413, "payload_too_large"
    default_detail = "The request body is larger than this server accepts."


class LengthRequired(CondorError):
    # A chunked body the WSGI server cannot say the end of (core/body_limit.py): never read as empty.
    status, code = 411, "length_required"
    default_detail = "This server cannot read a chunked request body here; send it with a Content-Length header."


class IdempotencyKeyReused(CondorError):
    status, code = 422, "idempotency_key_reused"
    default_detail = "This Idempotency-Key was already used with a different request body."


class TooManyPending(CondorError):
    status, code = 429, "too_many_pending"
    default_detail = "This client has too many approvals waiting for a reviewer."


class InvalidCursor(CondorError):
    # A page of the inbox snapshot (inbox/pages.py): an error frame on the socket, a 400 when polled;
    # a 400 on the cursor-paged session lists (sessions_app/pagination.py).
    status, code = 400, "invalid_cursor"
    default_detail = "This page cursor is not one the inbox sent: ask again from the first page (reconnect)."


class StreamRequiresAsgi(CondorError):
    # Answered by runs/stream.py: under WSGI the stream would hold a worker thread until the run ends.
    status, code = 400, "stream_requires_asgi"
    default_detail = (
        "The run stream is served only by the ASGI server: route GET /api/v1/runs/{id}/stream "
        "to daphne (condor.asgi:application), not to gunicorn/WSGI."
    )


class DatabaseUnavailable(CondorError):
    # Raised by no service: core/db_unavailable.py answers with it when the database is out of reach.
    status, code = 503, "database_unavailable"
    default_detail = "Condor cannot reach its database right now; retry after the Retry-After delay."


# The sessions surface (sessions_app/).
class MessageExists(CondorError):
    status, code = 409, "message_exists"
    default_detail = "This session already has a message with this id."


class SessionHasOpenApprovals(CondorError):
    status, code = 409, "session_has_open_approvals"
    default_detail = (
        "This session has approvals waiting for a reviewer or approved and not yet used: its "
        "patient cannot change until they are used, rejected or expired."
    )


class CardNotReported(CondorError):
    status, code = 422, "card_not_reported"
    default_detail = "No card with this identity was reported in this session."


# Registry four eyes (registry/changes.py).
class ToolChangeAlreadyPending(CondorError):
    status, code = 409, "tool_change_pending"
    default_detail = "A change to this tool is already waiting for confirmation: confirm or reject it first."


class ToolChangeNotPending(CondorError):
    status, code = 409, "tool_change_not_pending"
    default_detail = "This registry change was already confirmed or rejected."


class ToolChangeNeedsSecondAdmin(CondorError):
    status, code = 403, "tool_change_needs_second_admin"
    default_detail = "A change that lowers risk must be confirmed by a governance admin other than its proposer."


class ToolChangeStale(CondorError):
    status, code = 409, "tool_change_stale"
    default_detail = "The tool changed after this proposal was made: reject it and propose the change again."


class NotGovernanceAdmin(CondorError):
    status, code = 403, "permission_denied"
    default_detail = "Only a governance admin (who may change the tool registry) can do this."


# Access grants: governance or superuser through the admin takes four eyes (governance/access_grants.py).
class GrantAlreadyPending(CondorError):
    status, code = 409, "grant_pending"
    default_detail = "A grant for this account or group already waits for confirmation: confirm or reject it first."


class GrantNotPending(CondorError):
    status, code = 409, "grant_not_pending"
    default_detail = "This grant was already confirmed or rejected."


class GrantNeedsSecondAdmin(CondorError):
    status, code = 403, "grant_needs_second_admin"
    default_detail = (
        "A grant of governance or superuser must be confirmed by another governance admin: not its "
        "proposer, not the person it is for, and not one whose own grant the proposer made."
    )


# DRF's own exceptions, mapped onto our codes.
DRF_CODES = {
    drf.ParseError: "invalid_payload",
    drf.ValidationError: "invalid_payload",
    drf.UnsupportedMediaType: "invalid_payload",
    drf.NotAuthenticated: "not_authenticated",
    drf.AuthenticationFailed: "not_authenticated",
    drf.PermissionDenied: "permission_denied",
    drf.NotFound: "not_found",
    drf.MethodNotAllowed: "method_not_allowed",
    drf.NotAcceptable: "not_acceptable",
    drf.Throttled: "throttled",
}


def _classes(cls=CondorError):
    yield cls
    for sub in cls.__subclasses__():
        yield from _classes(sub)


# Every code an error answer's `error` field can hold: the enum the OpenAPI schema gives it.
STABLE_CODES = tuple(sorted({cls.code for cls in _classes()} | set(DRF_CODES.values()) | {"server_error"}))


def error_body(code: str, detail: str) -> dict:
    return {"error": code, "detail": detail}


def _validation_sentence(detail) -> str:
    """Flatten DRF's nested validation errors into one readable sentence."""
    if isinstance(detail, dict):
        parts = [f"{field}: {_validation_sentence(value)}" for field, value in detail.items()]
        return "; ".join(parts)
    if isinstance(detail, list):
        return " ".join(_validation_sentence(item) for item in detail)
    return str(detail)


def exception_handler(exc, context):
    if isinstance(exc, CondorError):
        return Response(error_body(exc.code, exc.detail), status=exc.status)
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    if isinstance(exc, drf.APIException):
        code = next((c for cls, c in DRF_CODES.items() if isinstance(exc, cls)), "error")
        detail = _validation_sentence(exc.detail)
        headers = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(math.ceil(exc.wait))  # never early: 0.4 s left is 1
        return Response(error_body(code, detail), status=exc.status_code, headers=headers)
    return None  # unexpected: let Django log it and answer 500
