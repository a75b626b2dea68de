"""GET /api/v1/inbox/cards/ — the pending cards, for an inbox whose websocket is down and for its search.

With Redis out the inbox socket cannot run, so the page polls this instead. It answers
exactly what the socket sends: the snapshot's pages (inbox/pages.py), each at
most PAGE_CARDS cards and PAGE_MAX_BYTES, in the queue's order, with the total and a
signed cursor; `?cursor=` asks for the page after one. The cards are approvals/cards.py's,
filtered by the same rule (approvals/visibility.py). Reviewers' session only; their
standing is read again on every call, like the socket's for every page and push.

With `patient_ref`, `ward`, `tool` or `risk` it answers the queue's search instead, over
every pending card the reviewer may see, in the same pages (inbox/search.py);
GET /api/v1/inbox/cards/filters/ says which wards and tools there are to filter by.
"""

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.generics import GenericAPIView, ListAPIView
from rest_framework.response import Response

from agents.auth import ReviewerOnly
from approvals.models import ApprovalStatus, ReasonCode
from approvals.visibility import reviewer_scope
from core.schema import errors
from inbox import pages as inbox_pages
from inbox import search as inbox_search


class _SessionPart(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField(allow_blank=True)
    patient_ref = serializers.CharField(allow_blank=True)
    age_band = serializers.CharField()
    consent = serializers.BooleanField()
    tainted = serializers.BooleanField()
    care_unit = serializers.CharField(allow_blank=True)


class _TaintSource(serializers.Serializer):
    tool = serializers.CharField()
    at = serializers.DateTimeField(help_text="When the untrusted result was reported.")


class _Said(serializers.Serializer):
    text = serializers.CharField(help_text="Its text parts, as plain text, at most 1500 characters.")
    at = serializers.DateTimeField(allow_null=True, help_text="When the client stored the message.")
    cut = serializers.BooleanField(help_text="True when the message says more than `text` (shown cut).")


class _Turn(serializers.Serializer):
    user = _Said(allow_null=True, help_text="The last user message written by the time the call parked.")
    agent = _Said(
        allow_null=True,
        help_text="The agent's text before the call: the run's assistant message (up to "
        "the call's tool part), or the last one after that user message.",
    )


class _ClientPart(serializers.Serializer):
    name = serializers.CharField()


class CardSerializer(serializers.Serializer):
    """A card as the inbox websocket sends it; `args` is null when `args_truncated` (fetch the approval).

    The schema only: approvals/cards.py builds the cards, for the socket and this endpoint alike.
    """

    id = serializers.UUIDField()
    run_id = serializers.UUIDField()
    session = _SessionPart()
    client = _ClientPart()
    tool = serializers.CharField()
    op = serializers.CharField(allow_blank=True)
    tool_call_id = serializers.CharField()
    reason_code = serializers.ChoiceField(choices=ReasonCode.choices)
    rule_id = serializers.CharField()
    explanation = serializers.CharField(
        allow_blank=True, allow_null=True, help_text="Null only when named in `cut_fields`."
    )
    hitl_tier = serializers.CharField(allow_null=True)
    args = serializers.DictField(allow_null=True)
    args_truncated = serializers.BooleanField()
    args_bytes = serializers.IntegerField(help_text="Size of the args' canonical JSON.")
    args_preview = serializers.CharField(
        required=False, help_text="Only when truncated: the start of the args' canonical JSON, to read, not to act on."
    )
    payload_hash = serializers.CharField()
    message = serializers.CharField(allow_null=True)
    resume_schema = serializers.DictField(allow_null=True, help_text="Null only when named in `cut_fields`.")
    requested_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=[ApprovalStatus.PENDING])
    rationale = serializers.CharField(
        allow_null=True,
        help_text="The agent's `metadata.rationale` for the call (plain text, capped at 2000 characters).",
    )
    turn = _Turn(
        allow_null=True,
        help_text="The conversation turn that led to the call, from the session's "
        "messages; null when the session has none.",
    )
    autonomy = serializers.CharField(allow_null=True, help_text="The run's autonomy, as the gate used it.")
    tainted_by = _TaintSource(allow_null=True, help_text="For a tainted session: the result that tainted it.")
    run_granted = serializers.ListField(
        child=serializers.DictField(),
        allow_null=True,
        help_text="The grants the card's run holds: approved, not yet used (`{id, tool, op, status, decided_by}`); "
        "null only when named in `cut_fields`.",
    )
    claimed_by = serializers.CharField(allow_null=True, help_text="The reviewer working the card (a live claim).")
    claim_expires_at = serializers.DateTimeField(allow_null=True)
    approvals_required = serializers.IntegerField(help_text="Four eyes: distinct reviewers who must approve.")
    approvals = serializers.ListField(
        child=serializers.DictField(),
        allow_null=True,
        help_text="The approvals counted so far: `{reviewer, at, reason}`; null only when named in `cut_fields`.",
    )
    escalated_at = serializers.DateTimeField(allow_null=True, help_text="Set when the sweep escalated the card.")
    cut_fields = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only on a card too big for a page frame on its own: the fields sent as null, to load from "
        "the approval (`GET approvals/{id}/`) before acting on the card.",
    )


class CardPageSerializer(serializers.Serializer):
    """One page of the pending cards, as the inbox websocket's snapshot and page frames carry it."""

    patient_totals = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="Only when searching or filtering: for each patient on the page, how many of their cards match "
        "(on every page, not only the cards of this one).",
    )
    cards = CardSerializer(many=True)
    total = serializers.IntegerField(
        help_text="Every pending card this reviewer may see (when searching or "
        "filtering: every one that matches), on every page."
    )
    cursor = serializers.CharField(
        allow_null=True,
        help_text="Pass as `?cursor=` for the next page, with the same search and filters; null on the last page.",
    )


class _FilterOption(serializers.Serializer):
    value = serializers.CharField()
    count = serializers.IntegerField(help_text="Pending cards the reviewer may see with this value.")


class FilterOptionsSerializer(serializers.Serializer):
    wards = _FilterOption(many=True, help_text="Care units with pending cards, by name (at most 200).")
    tools = _FilterOption(many=True, help_text="Tools with pending cards, by name (at most 200).")


class ReviewerView(ReviewerOnly, GenericAPIView):
    """An inbox endpoint. Reviewers only, logged in with a Django session; API keys are refused (403)."""

    def reviewer_scope(self):
        """The caller's scope, read again on every call (their standing may have changed)."""
        scope = reviewer_scope(self.request.user)
        if scope is None:
            raise PermissionDenied("Only active clinical reviewers may read the inbox.")
        return scope


class ReviewerList(ReviewerView, ListAPIView):
    filter_backends = []


def _text(max_length: int, **more) -> dict:
    return {"type": "string", "maxLength": max_length, **more}


_SEARCH_PARAMETERS = [
    OpenApiParameter(
        "patient_ref",
        _text(inbox_search.PATIENT_REF_MAX_LENGTH),
        description=(
            "Only the cards of patients whose ref starts with this (case-insensitive, never a substring); the cards of "
            "a patient whose ref is exactly this come first."
        ),
    ),
    OpenApiParameter(
        "ward",
        _text(inbox_search.CARE_UNIT_MAX_LENGTH),
        description="Only the cards of sessions in this care unit (exactly).",
    ),
    OpenApiParameter(
        "tool",
        _text(inbox_search.TOOL_MAX_LENGTH, pattern=r"^[A-Za-z0-9._-]*$"),
        description="Only the cards of calls to this tool (exactly).",
    ),
    OpenApiParameter(
        "risk",
        str,
        enum=list(inbox_search.RISKS),
        description="Only the cards of this risk tier (`none`: no tier, questions).",
    ),
]


class PendingCards(ReviewerView):
    @extend_schema(
        parameters=[
            OpenApiParameter("cursor", str, description="The `cursor` of the page before; absent for the first page."),
            *_SEARCH_PARAMETERS,
        ],
        responses={
            200: CardPageSerializer,
            **errors(
                400,
                403,
                e400="invalid_cursor: the cursor is not one the inbox sent for this search and these filters; "
                "start again from the first page. invalid_payload: a search or filter value is too "
                "long, has a control character, or is not one the filter allows; the detail names it.",
            ),
        },
    )
    def get(self, request, *args, **kwargs):
        scope = self.reviewer_scope()
        filters = inbox_search.parse(request.query_params)
        cursor = request.query_params.get("cursor")
        # The page's text as the socket's frame is made (each card encoded once), not re-rendered.
        if filters:
            body = inbox_search.message(scope, filters, cursor)
        else:
            body = inbox_pages.build(scope, cursor).message()
        return HttpResponse(body, content_type="application/json")


class FilterOptions(ReviewerView):
    @extend_schema(responses={200: FilterOptionsSerializer, **errors(403)})
    def get(self, request, *args, **kwargs):
        return Response(inbox_search.options(self.reviewer_scope()))
