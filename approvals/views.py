from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from agents import idempotency
from agents.auth import IsAgent, IsReviewer, ReviewerOnly, calling_client
from approvals import decisions, seen
from approvals.gate import GateCall, gate_tool_call, request_clarification
from approvals.models import Approval
from approvals.results import report_result
from approvals.resume import resume
from approvals.resume_schemas import InvalidClarificationRequest
from approvals.serializers import (
    ApprovalSerializer,
    ClarificationSerializer,
    DecisionSerializer,
    GateVerdictSerializer,
    ResumeResultSerializer,
    ResumeSerializer,
    SuspendedSerializer,
    ToolCallSerializer,
    ToolResultReceiptSerializer,
    ToolResultSerializer,
)
from approvals.visibility import reviewer_scope
from core.errors import InvalidPayload, NotFound
from core.schema import errors
from core.serializers import validated
from runs.scoping import owned_run
from runs.serializers import RunSerializer


def validated_for_owned_run(request, run_id, serializer_class) -> dict:
    """The body, validated; a bad body on another client's run is still 404 (SPEC 9), never a 400.

    The hot paths check ownership in the statement that locks the run, so the extra
    lookup happens only on this error path.
    """
    try:
        return validated(serializer_class, request.data)
    except ValidationError:
        owned_run(request, run_id)
        raise


class ToolCallGate(APIView):
    throttle_scope = "gate"

    @extend_schema(
        request=ToolCallSerializer,
        responses={
            200: GateVerdictSerializer,
            202: SuspendedSerializer,
            **errors(
                400,
                401,
                404,
                409,
                410,
                e400="invalid_payload: a field is missing or malformed, e.g. a "
                "`metadata.rationale` that is not a string or is over 2000 characters.",
                e409="run_not_active: the run is not executing; tool_call_conflict: this "
                "tool_call_id was already gated with another tool, op or args; "
                "approval_consumed / approval_rejected: this exact call's approval was "
                "already used or rejected; context_changed: an approval of exactly this call "
                "(a cold replay) was given for another patient context than the session's now "
                "(patient_ref, age_band, consent), so it is not used. A call the policy in "
                "force blocks is answered 200 blocked, whatever grant it has.",
                e410="approval_expired: this exact call's approval is past its deadline.",
            ),
        },
    )
    def post(self, request, run_id):
        client = calling_client(request)
        # Ownership is checked in the statement that locks the run (one round trip, not two).
        result = gate_tool_call(
            run_id,
            GateCall(**validated_for_owned_run(request, run_id, ToolCallSerializer)),
            client=client,
            owned_by=client,
        )
        return Response(result.body, status=result.status)


class Clarification(APIView):
    throttle_scope = "gate"

    @extend_schema(
        request=ClarificationSerializer,
        description="Parks the run on a form for a reviewer (202). A client that cannot park gets "
        "200 `{decision: blocked, rule_id: client.cannot-park}` instead.",
        responses={
            202: SuspendedSerializer,
            200: GateVerdictSerializer,
            **errors(
                400,
                401,
                404,
                409,
                410,
                e409="run_not_active: the run is not executing; approval_consumed / "
                "approval_rejected: this exact clarification was already answered and "
                "used, or declined.",
                e410="approval_expired: this exact clarification is past its deadline.",
            ),
        },
    )
    def post(self, request, run_id):
        run = owned_run(request, run_id)
        body = validated(ClarificationSerializer, request.data)
        try:
            result = request_clarification(run, body, client=calling_client(request))
        except InvalidClarificationRequest as error:
            raise InvalidPayload(str(error)) from None
        return Response(result.body, status=result.status)


class ToolResult(APIView):
    @extend_schema(
        request=ToolResultSerializer,
        responses={
            200: ToolResultReceiptSerializer,
            **errors(
                400,
                401,
                404,
                409,
                e409="approval_pending: the call still waits on its approval (resume first); "
                "tool_call_not_allowed: the call was blocked, or its approval was never "
                "used, so it has no result; tool_result_already_reported; run_not_active: "
                "the run has ended (an untrusted result still taints the session).",
            ),
        },
    )
    def post(self, request, run_id, tool_call_id):
        run = owned_run(request, run_id)
        call, tainted = report_result(
            run.pk, tool_call_id, client=calling_client(request), **validated(ToolResultSerializer, request.data)
        )
        return Response(
            {"tool_call_id": call.tool_call_id, "session_tainted": tainted, "reported_at": call.reported_at}
        )


class Resume(APIView):
    @extend_schema(
        request=ResumeSerializer,
        responses={
            200: ResumeResultSerializer,
            **errors(
                400,
                401,
                404,
                409,
                410,
                422,
                e409="approval_pending, approval_rejected, approval_consumed, payload_mismatch, "
                "run_not_suspended; context_changed: the session's patient context (patient_ref, "
                "age_band, consent) is not the one the approval was given for; policy_changed: the "
                "registry or egress allow-list in force now blocks the approved call (the detail names "
                "the rule). Either way nothing was consumed, and the refusal is audited.",
                e410="approval_expired: the approval is past its deadline; approval_withdrawn: its run "
                "was superseded, stopped or closed while it was open.",
                e422="idempotency_key_reused: the same Idempotency-Key came with a different body.",
            ),
        },
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                {"type": "string", "minLength": 1, "maxLength": idempotency.MAX_KEY_LENGTH},
                OpenApiParameter.HEADER,
                required=False,
            )
        ],
    )
    def post(self, request, run_id):
        client = calling_client(request)
        body = validated_for_owned_run(request, run_id, ResumeSerializer)

        def handler():
            # Ownership is checked in the statement that locks the run.
            approval, resumed_run = resume(run_id, body["approval_id"], body["args"], client=client, owned_by=client)
            return 200, {
                "proceed": True,
                "args": approval.approved_args,
                "values": approval.resume_data or {},
                "approval": ApprovalSerializer(approval).data,
                "run": RunSerializer(resumed_run).data,
            }

        key = request.META.get("HTTP_IDEMPOTENCY_KEY")  # not request.headers: that maps every header first
        if key is None:
            status, payload = handler()
        else:
            fingerprint = idempotency.fingerprint(request.method, request.path, request.data)
            status, payload = idempotency.run_once(client, key, fingerprint, handler)
        return Response(payload, status=status)


class ApprovalDetail(APIView):
    permission_classes = [IsAgent | IsReviewer]

    @extend_schema(
        responses={
            200: ApprovalSerializer,
            **errors(401, 403, 404, e403="permission_denied: logged in, but neither an agent's key nor a reviewer."),
        }
    )
    def get(self, request, approval_id):
        approvals = Approval.objects.select_related("decided_by")
        client = calling_client(request)
        if client is not None:
            approvals = approvals.filter(session__client=client, session__deleted_at__isnull=True)
        else:  # a reviewer (IsReviewer passed): what their scope shows, as in the inbox
            scope = reviewer_scope(request.user)
            approvals = scope.visible(approvals) if scope is not None else approvals.none()
        approval = approvals.filter(pk=approval_id).first()
        if approval is None:
            raise NotFound("No such approval.")
        if client is None:
            seen.record_full_view(approval, user=request.user)  # "Show all" on a cut card: now it may be approved
        return Response(ApprovalSerializer(approval).data)


class Decision(ReviewerOnly, APIView):
    """Reviewers only, logged in with a Django session (CSRF checked); API keys are refused."""

    @extend_schema(
        request=DecisionSerializer,
        responses={
            200: ApprovalSerializer,
            **errors(
                400,
                403,
                404,
                409,
                422,
                e400="invalid_payload: the body is not a valid decision, or edited args the policy blocks "
                "(a host off the tool's allow-list); locked_arg: the edit changes an argument that names "
                "the patient (see the approval's locked_args; the detail names it). Nothing changed.",
                e403="permission_denied: only logged-in reviewers decide (not logged in, or an API key).",
                e409="approval_not_pending: the approval was already decided or has expired; "
                "payload_changed: the args on the table are not the payload_hash named (an edit); "
                "full_args_not_viewed: a card too long to show whole was approved unread; "
                "approval_claimed: another reviewer holds a live claim on it (or, with stop_run, "
                "on another open card of its run); "
                "already_approved_by_you: this payload needs another reviewer's approval; "
                "context_changed: the session's patient context is no longer the card's; "
                "policy_changed: the policy in force now blocks the call (the rule named). These "
                "two approve nothing and are audited.",
                e422="resume_schema_rejected: the decision does not match the resume schema; the run has failed.",
            ),
        },
    )
    def post(self, request, approval_id):
        # An approval this reviewer may not see is 404 (decisions.decide checks it on the locked row).
        approval = decisions.decide(approval_id, request.data, user=request.user)
        return Response(ApprovalSerializer(approval).data)
