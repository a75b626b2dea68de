"""The session endpoints that read its runs: the list (filtered by the latest run's state), the
history (messages with the runs' gated calls folded in), the event log, outcomes, usage and the
memory the run summaries make.

Under sessions/ but the runs app's: they read runs, and sessions_app does not know them.
"""

from django.db.models import Count, Sum
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.auth import calling_client
from core.errors import InvalidPayload
from core.json_body import prebuilt_json_response
from core.query_numbers import whole_number
from core.schema import errors
from runs.models import Run, RunDispatch, RunEvent
from runs.session_filters import SessionFilter
from runs.session_history import history_json
from runs.states import ACTIVE_STATES
from sessions_app.memory import RUN_WINDOW, rolling_memory
from sessions_app.models import Session
from sessions_app.pagination import NewestFirst
from sessions_app.scoping import owned_session
from sessions_app.serializers import SessionCreateSerializer, SessionSerializer, UIMessageSerializer

EVENT_PAGE = 100
MAX_EVENT_PAGE = 500


class RunEventSerializer(serializers.ModelSerializer):
    run = serializers.UUIDField(source="run_id")

    class Meta:
        model = RunEvent
        fields = ["id", "run", "kind", "step_id", "data", "frames", "created_at"]
        read_only_fields = fields


class EventPageSerializer(serializers.Serializer):
    results = RunEventSerializer(many=True)
    next_after = serializers.IntegerField(
        allow_null=True, help_text="Pass as `after` for the next page; null at the end of the log (for now)."
    )


class RunsSummarySerializer(serializers.Serializer):
    total = serializers.IntegerField()
    active = serializers.IntegerField()
    by_state = serializers.DictField(child=serializers.IntegerField())
    by_terminal_reason = serializers.DictField(child=serializers.IntegerField())


class UsageSerializer(serializers.Serializer):
    runs = serializers.IntegerField(help_text="Runs with a telemetry row (closed runs).")
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    # No bound on the digits: a sum over many runs, each at most 10^8 (runs/telemetry.py), outgrows any.
    cost = serializers.DecimalField(max_digits=None, decimal_places=6)


class UsageRollupSerializer(UsageSerializer):
    by_model = serializers.ListField(child=serializers.DictField())


def _int_param(request, name: str, default: int, maximum: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    value = whole_number(raw)
    if value is None:
        raise InvalidPayload(f"'{name}' must be a non-negative integer.")
    return min(value, maximum) if maximum else value


class SessionEvents(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("after", int, description="Only events with a larger id."),
            OpenApiParameter("limit", int, description=f"Page size (default {EVENT_PAGE}, at most {MAX_EVENT_PAGE})."),
        ],
        responses={200: EventPageSerializer, **errors(400, 401, 404)},
        description="The persisted run-event log of every run of the session, in commit order.",
    )
    def get(self, request, session_id):
        session = owned_session(request, session_id)
        after = _int_param(request, "after", 0)
        limit = max(_int_param(request, "limit", EVENT_PAGE, MAX_EVENT_PAGE), 1)
        events = list(RunEvent.objects.filter(run__session=session, id__gt=after).order_by("id")[:limit])
        return Response(
            {
                "results": RunEventSerializer(events, many=True).data,
                "next_after": events[-1].pk if len(events) == limit else None,
            }
        )


class RunsSummary(APIView):
    @extend_schema(
        responses={200: RunsSummarySerializer, **errors(401, 404)},
        description="How the session's runs went: counts by state and by terminal reason.",
    )
    def get(self, request, session_id):
        session = owned_session(request, session_id)
        rows = Run.objects.filter(session=session).values("state", "terminal_reason").annotate(n=Count("pk"))
        by_state, by_reason = {}, {}
        for row in rows.order_by():
            by_state[row["state"]] = by_state.get(row["state"], 0) + row["n"]
            if row["terminal_reason"]:
                by_reason[row["terminal_reason"]] = by_reason.get(row["terminal_reason"], 0) + row["n"]
        return Response(
            {
                "total": sum(by_state.values()),
                "active": sum(by_state.get(state.value, 0) for state in ACTIVE_STATES),
                "by_state": by_state,
                "by_terminal_reason": by_reason,
            }
        )


class UsageRollup(APIView):
    @extend_schema(
        responses={200: UsageRollupSerializer, **errors(401, 404)},
        description="Tokens in and out and cost, summed from the telemetry row of each closed run.",
    )
    def get(self, request, session_id):
        session = owned_session(request, session_id)
        rows = list(
            RunDispatch.objects.filter(session_id=session.pk)
            .values("model")
            .annotate(
                runs=Count("pk"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"), cost=Sum("cost")
            )
            .order_by("model")
        )
        by_model = UsageSerializer(rows, many=True).data
        for shaped, row in zip(by_model, rows, strict=True):
            shaped["model"] = row["model"]
        totals = {key: sum(row[key] for row in rows) for key in ("runs", "input_tokens", "output_tokens", "cost")}
        return Response(UsageRollupSerializer({**totals, "by_model": by_model}).data)


class MemorySerializer(serializers.Serializer):
    facts = serializers.ListField(child=serializers.CharField())
    decisions = serializers.ListField(child=serializers.CharField())
    plan = serializers.ListField(child=serializers.CharField())
    open_questions = serializers.ListField(child=serializers.CharField())
    notes = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="Summary text that was not a well-formed block, with its run.",
    )


class Memory(APIView):
    @extend_schema(
        responses={200: MemorySerializer, **errors(401, 404)},
        description="The session's rolling working memory, built from its runs' close summaries by "
        "one parser (sessions_app/memory.py documents the block format).",
    )
    def get(self, request, session_id):
        session = owned_session(request, session_id)
        latest = list(
            Run.objects.filter(session=session, closed_at__isnull=False)
            .exclude(summary="")
            .order_by("-closed_at", "-pk")
            .values_list("pk", "summary")[:RUN_WINDOW]
        )
        return Response(rolling_memory(reversed(latest)))


class SessionListCreate(generics.GenericAPIView):
    serializer_class = SessionSerializer
    filterset_class = SessionFilter
    pagination_class = NewestFirst

    def get_queryset(self):
        return Session.objects.live().filter(client=calling_client(self.request))

    # 400: a filter value outside its choices (tainted=maybe, autonomy=…), or a cursor the server
    # did not send (invalid_cursor, sessions_app/pagination.py). `tainted` is
    # the strings true/false (drf-spectacular would call it a boolean with string values).
    @extend_schema(
        responses={200: SessionSerializer(many=True), **errors(400, 401)},
        parameters=[OpenApiParameter("tainted", str, enum=["true", "false"])],
    )
    def get(self, request):
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(SessionSerializer(page, many=True).data)

    @extend_schema(request=SessionCreateSerializer, responses={201: SessionSerializer, **errors(400, 401)})
    def post(self, request):
        body = SessionCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        session = Session.objects.create(client=calling_client(request), **body.validated_data)
        return Response(SessionSerializer(session).data, status=status.HTTP_201_CREATED)


class History(APIView):
    @extend_schema(
        responses={200: UIMessageSerializer(many=True), **errors(401, 404)},
        description="The conversation as AI SDK v6 UIMessages, gated calls included with their "
        "approval state, ready for `useChat({messages})`.",
    )
    def get(self, request, session_id):
        # The body comes built (runs/session_history.py): a DRF Response would parse nothing, but it
        # would hold the whole conversation as Python values only to encode them again.
        return prebuilt_json_response(request, history_json(owned_session(request, session_id)))
