"""POST / DELETE approvals/{id}/claim/ — a reviewer takes or gives back a card (approvals/claims.py)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.auth import ReviewerOnly
from approvals import claims
from core.schema import errors


class ClaimSerializer(serializers.Serializer):
    claimed_by = serializers.CharField(help_text="The username of the reviewer holding the claim.")
    claim_expires_at = serializers.DateTimeField()


class Claim(ReviewerOnly, APIView):
    """Reviewers only, logged in with a Django session (CSRF checked); API keys are refused."""

    @extend_schema(
        request=None,
        responses={
            200: ClaimSerializer,
            **errors(
                403,
                404,
                409,
                e409="approval_claimed: another reviewer holds a live claim (the detail names "
                "them); approval_not_pending: already decided or expired.",
            ),
        },
        description="Claim the card for CONDOR_CLAIM_TTL_SECONDS (300); the holder claiming again renews it.",
    )
    def post(self, request, approval_id):
        # One this reviewer may not see is 404: claims checks it on the locked row.
        approval = claims.claim(approval_id, user=request.user)
        return Response(
            {"claimed_by": request.user.get_username(), "claim_expires_at": approval.claim_expires_at.isoformat()}
        )

    @extend_schema(
        request=None,
        responses={
            204: None,
            **errors(
                403,
                404,
                409,
                e409="approval_claimed: another reviewer holds the claim; "
                "approval_not_pending: already decided or expired.",
            ),
        },
        description="Give the claim back (holder only). Releasing a claim nobody holds changes nothing.",
    )
    def delete(self, request, approval_id):
        claims.release(approval_id, user=request.user)
        return Response(status=204)
