"""GET /api/v1/inbox/decided/ — the inbox's "Decided" view: the last 24 h of decisions a reviewer can see.

Searchable by `patient_ref` (`?patient_ref=`, a case-insensitive substring), newest
first, each with the args asked for and the args approved (so an edit shows), who
decided, when, why, the four-eyes approvals, and what the run did next (its state
and terminal reason now). Visibility is the inbox's own rule (approvals/visibility.py).
"""

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination

from approvals import cards
from approvals.inbox_cards import ReviewerList
from approvals.models import Approval
from condor.schema import errors

WINDOW = timedelta(hours=24)


class DecidedSerializer(serializers.ModelSerializer):
    patient_ref = serializers.CharField(source="session.patient_ref")
    care_unit = serializers.CharField(source="session.care_unit")
    session_title = serializers.CharField(source="session.title")
    decided_by = serializers.SerializerMethodField()
    edited = serializers.SerializerMethodField(help_text="The reviewer changed the args before approving.")
    approvals = serializers.SerializerMethodField()
    run_state = serializers.CharField(source="run.state", help_text="What the run did next: its state now.")
    run_terminal_reason = serializers.CharField(source="run.terminal_reason")

    class Meta:
        model = Approval
        fields = ["id", "run", "patient_ref", "care_unit", "session_title", "tool", "op", "reason_code", "status",
                  "args", "approved_args", "edited", "resume_data", "decided_by", "decided_at", "decision_reason",
                  "approvals_required", "approvals", "run_state", "run_terminal_reason"]
        read_only_fields = fields

    def get_decided_by(self, approval) -> str | None:
        return approval.decided_by.get_username() if approval.decided_by_id else None

    def get_edited(self, approval) -> bool:
        return approval.approved_args is not None and approval.approved_args != approval.args

    def get_approvals(self, approval) -> list[dict]:
        return cards.counted_approvals(approval)


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
        patient_ref = self.request.query_params.get("patient_ref", "").strip()
        if patient_ref:
            decided = decided.filter(session__patient_ref__icontains=patient_ref)
        return scope.visible(decided).select_related("session", "run", "decided_by").order_by("-decided_at", "pk")

    @extend_schema(responses={200: DecidedSerializer(many=True), **errors(403)}, parameters=[
        OpenApiParameter("patient_ref", str, description="Only decisions for patients whose ref contains this.")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
