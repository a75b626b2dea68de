"""GET /api/v1/inbox/decided/ — the inbox's "Decided" view: the last 24 h of decisions a reviewer can see.

Searchable by `patient_ref` (`?patient_ref=`, a case-insensitive substring), newest
first, each with the args asked for and the args approved (so an edit shows), who
decided, when, why, the four-eyes approvals, what the run did next (its state and
terminal reason now) and what became of an approved call (`call_outcome`: ran, failed,
running, waiting, withdrawn, expired), from the approval and the call's ledger row.
Visibility is the inbox's own rule (approvals/visibility.py).
"""

from datetime import datetime, timedelta

from django.db.models import OuterRef, Subquery
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination

from approvals import cards
from approvals.models import Approval, ApprovalStatus, ToolCall
from core.schema import errors
from inbox import search as inbox_search
from inbox.card_views import ReviewerList

WINDOW = timedelta(hours=24)
CALL_OUTCOMES = {
    "ran": "the agent ran the approved call and reported its result",
    "failed": "the agent ran the approved call and reported an error",
    "running": "the agent took the approval and has not reported the call's result yet",
    "waiting": "approved, and the agent has not used the approval yet",
    "withdrawn": "the run ended before the agent used the approval",
    "expired": "the approval ran out before the agent used it",
}


def call_outcome(approval, now=None) -> str | None:
    """What became of an approved call, from the approval and its ledger row's result (annotated
    as `call_reported_at` and `call_is_error`); None for a rejection."""
    status = approval.status
    if status == ApprovalStatus.CONSUMED:
        if approval.call_reported_at is None:
            return "running"
        return "failed" if approval.call_is_error else "ran"
    if status == ApprovalStatus.WITHDRAWN:
        return "withdrawn"
    if status == ApprovalStatus.EXPIRED or (
        status == ApprovalStatus.APPROVED and approval.expires_at <= (now or timezone.now())
    ):
        return "expired"  # the grant's deadline passed unused; the sweep marks it in time
    if status == ApprovalStatus.APPROVED:
        return "waiting"
    return None


class DecidedSerializer(serializers.ModelSerializer):
    patient_ref = serializers.CharField(source="session.patient_ref")
    care_unit = serializers.CharField(source="session.care_unit")
    session_title = serializers.CharField(source="session.title")
    decided_by = serializers.SerializerMethodField()
    edited = serializers.SerializerMethodField(help_text="The reviewer changed the args before approving.")
    approvals = serializers.SerializerMethodField()
    run_state = serializers.CharField(source="run.state", help_text="What the run did next: its state now.")
    run_terminal_reason = serializers.CharField(source="run.terminal_reason")
    call_outcome = serializers.SerializerMethodField(
        help_text="What became of the approved call: "
        + "; ".join(f"`{name}`: {meaning}" for name, meaning in CALL_OUTCOMES.items())
        + ". Null for a rejection."
    )
    call_outcome_at = serializers.SerializerMethodField(
        help_text="When that happened: the result's report (ran, "
        "failed), the agent's taking the approval "
        "(running) or the approval's deadline (waiting, "
        "expired); null otherwise."
    )

    class Meta:
        model = Approval
        fields = [
            "id",
            "run",
            "patient_ref",
            "care_unit",
            "session_title",
            "tool",
            "op",
            "reason_code",
            "status",
            "args",
            "approved_args",
            "edited",
            "resume_data",
            "decided_by",
            "decided_at",
            "decision_reason",
            "approvals_required",
            "approvals",
            "run_state",
            "run_terminal_reason",
            "call_outcome",
            "call_outcome_at",
        ]
        read_only_fields = fields

    def get_decided_by(self, approval) -> str | None:
        return approval.decided_by.get_username() if approval.decided_by_id else None

    def get_edited(self, approval) -> bool:
        return approval.approved_args is not None and approval.approved_args != approval.args

    def get_approvals(self, approval) -> list[dict]:
        return cards.counted_approvals(approval)

    @extend_schema_field(serializers.ChoiceField(choices=list(CALL_OUTCOMES), allow_null=True))
    def get_call_outcome(self, approval) -> str | None:
        return call_outcome(approval)

    def get_call_outcome_at(self, approval) -> datetime | None:
        at = {
            "ran": approval.call_reported_at,
            "failed": approval.call_reported_at,
            "running": approval.consumed_at,
            "waiting": approval.expires_at,
            "expired": approval.expires_at,
        }.get(call_outcome(approval))
        return serializers.DateTimeField().to_representation(at) if at else None


class DecidedPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


class DecidedCards(ReviewerList):
    serializer_class = DecidedSerializer
    pagination_class = DecidedPagination

    def get_queryset(self):
        scope = self.reviewer_scope()
        # Decided by a person: an expiry has no decider and is not a decision.
        decided = Approval.objects.filter(decided_at__gte=timezone.now() - WINDOW, decided_by__isnull=False)
        # The queue search's limits (inbox/search.py): a ref's length, no control characters.
        patient_ref = inbox_search.parse({"patient_ref": self.request.query_params.get("patient_ref", "")}).patient_ref
        if patient_ref:
            decided = decided.filter(session__patient_ref__icontains=patient_ref)
        # The call's result, from its ledger row, in the same query (not one query a decision).
        call = ToolCall.objects.filter(run=OuterRef("run"), tool_call_id=OuterRef("tool_call_id"))
        decided = decided.annotate(
            call_reported_at=Subquery(call.values("reported_at")[:1]),
            call_is_error=Subquery(call.values("is_error")[:1]),
        )
        return scope.visible(decided).select_related("session", "run", "decided_by").order_by("-decided_at", "pk")

    @extend_schema(
        responses={
            200: DecidedSerializer(many=True),
            **errors(
                400, 403, e400="invalid_payload: `patient_ref` is over 120 characters or has a control character."
            ),
        },
        parameters=[
            OpenApiParameter(
                "patient_ref",
                {"type": "string", "maxLength": inbox_search.PATIENT_REF_MAX_LENGTH},
                description="Only decisions for patients whose ref contains this (case-insensitive).",
            )
        ],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
