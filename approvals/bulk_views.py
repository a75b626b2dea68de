"""POST approvals/bulk-decision/ — a reviewer approves or rejects several low-risk cards at once
(approvals/bulk_decisions.py)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.auth import ReviewerOnly
from approvals import bulk_decisions
from approvals.serializers import ApprovalSerializer
from core.schema import errors
from core.serializers import StrictSerializer, validated


class BulkCardSerializer(StrictSerializer):
    id = serializers.UUIDField(help_text="The approval's id.")
    payload_hash = serializers.RegexField(
        r"^[0-9a-f]{64}$",
        required=False,
        help_text="When approving: the payload_hash of the card as shown, as for one decision (409 "
        "payload_changed for this card if other args are on the table now).",
    )


class BulkDecisionSerializer(StrictSerializer):
    """One decision, one reason, for every card listed; each card is decided on its own."""

    approved = serializers.BooleanField(help_text="true approves every card, false rejects every card.")
    reason = serializers.CharField(
        max_length=4000, help_text="Why, for every card: shown on each and kept in each card's audit row."
    )
    cards = serializers.ListField(
        child=BulkCardSerializer(),
        min_length=1,
        help_text=f"At most {bulk_decisions.BULK_MAX_CARDS} distinct low-risk approval "
        "cards (400 bulk_too_large past that).",
    )


class BulkCardOutcomeSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField(
        allow_null=True,
        help_text="The card's status after its decision: approved, "
        "rejected, or pending (an approval counted under "
        "four eyes); null when it was not decided.",
    )
    error = serializers.CharField(
        allow_blank=True,
        help_text="Why this card was not decided: the stable code a "
        "single decision would have answered with (README, "
        '"Error codes"); empty when it was.',
    )
    detail = serializers.CharField(allow_blank=True)
    approval = ApprovalSerializer(allow_null=True, help_text="The card as its decision left it.")


class BulkDecisionResultSerializer(serializers.Serializer):
    bulk_id = serializers.UUIDField(help_text="Carried by every decided card's audit row (data.bulk_id).")
    decided = serializers.IntegerField(help_text="How many of the cards were decided (or counted).")
    results = BulkCardOutcomeSerializer(many=True, help_text="One per card, in the order sent.")


class BulkDecision(ReviewerOnly, APIView):
    """Reviewers only, logged in with a Django session (CSRF checked); API keys are refused."""

    @extend_schema(
        request=BulkDecisionSerializer,
        responses={
            200: BulkDecisionResultSerializer,
            **errors(
                400,
                403,
                404,
                422,
                e400="invalid_payload: the body is not a valid bulk decision (no reason, a card listed "
                "twice); bulk_too_large: more cards than a bulk takes. Nothing was decided.",
                e403="permission_denied: only logged-in reviewers decide (not logged in, or an API key).",
                e404="not_found: a card listed does not exist or is not this reviewer's to see. Nothing was decided.",
                e422="bulk_high_risk: a card listed is not a low-risk approval card (high risk, no risk "
                "tier, or a question); decide it on its own. Nothing was decided.",
            ),
        },
        description="Each card is decided as by POST approvals/{id}/decision/ with {approved, reason}, in the "
        "order sent, each in its own transaction under the same rules (claims, four eyes, the "
        "payload shown, the policy in force); a card refused then is reported in `results` with "
        "its error code and the others are decided all the same. Every decision's audit row "
        "carries `bulk_id`.",
    )
    def post(self, request):
        body = validated(BulkDecisionSerializer, request.data)
        reason = body["reason"].strip()
        cards = [bulk_decisions.BulkCard(c["id"], c.get("payload_hash")) for c in body["cards"]]
        bulk_id, outcomes = bulk_decisions.decide_bulk(
            cards, approved=body["approved"], reason=reason, user=request.user
        )
        results = [
            {
                "id": o.id,
                "status": o.approval.status if o.approval is not None else None,
                "error": o.error,
                "detail": o.detail,
                "approval": ApprovalSerializer(o.approval).data if o.approval is not None else None,
            }
            for o in outcomes
        ]
        return Response(
            {"bulk_id": bulk_id, "decided": sum(o.approval is not None for o in outcomes), "results": results}
        )
