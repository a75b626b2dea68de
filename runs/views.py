from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.auth import calling_client
from core.schema import errors
from core.serializers import validated
from runs import spine
from runs.scoping import owned_run
from runs.serializers import (
    CloseSerializer,
    OpenedRunSerializer,
    RunOpenSerializer,
    RunSerializer,
    TransitionSerializer,
)
from sessions_app.scoping import owned_session


class RunOpen(APIView):
    @extend_schema(
        request=RunOpenSerializer,
        responses={201: OpenedRunSerializer, **errors(400, 401, 404)},
        description=(
            "Opens the session's next run. A session has at most one active run: opening one while "
            "another is active supersedes it (that run ends `aborted` with terminal_reason "
            "`superseded`, and its pending approvals are `withdrawn`: reviewers see them go, the "
            "agent's stream gets each one's decision chunk with reason `withdrawn`). Grants it was "
            "already given stay usable in the session until their deadline (cold replay). "
            "`superseded_run` names the run this one superseded, or is null."
        ),
    )
    def post(self, request, session_id):
        session = owned_session(request, session_id)
        opened = spine.open_run_superseding(session, **validated(RunOpenSerializer, request.data))
        return Response(
            OpenedRunSerializer(opened.run, context={"superseded": opened.superseded}).data,
            status=status.HTTP_201_CREATED,
        )


class RunDetail(APIView):
    @extend_schema(responses={200: RunSerializer, **errors(401, 404)})
    def get(self, request, run_id):
        return Response(RunSerializer(owned_run(request, run_id)).data)


class RunTransition(APIView):
    @extend_schema(
        request=TransitionSerializer,
        responses={
            200: RunSerializer,
            **errors(
                400,
                401,
                404,
                409,
                e409="run_state_transition: that edge is not allowed (a suspended run "
                "is never unparked by a transition).",
            ),
        },
    )
    def post(self, request, run_id):
        run = owned_run(request, run_id)
        return Response(
            RunSerializer(spine.transition(run.pk, validated(TransitionSerializer, request.data)["to"])).data
        )


class RunClose(APIView):
    @extend_schema(request=CloseSerializer, responses={200: RunSerializer, **errors(400, 401, 404)})
    def post(self, request, run_id):
        run = owned_run(request, run_id)
        body = validated(CloseSerializer, request.data)
        closed = spine.close(
            run.pk,
            body["reason"],
            summary=body.get("summary", ""),
            usage=body.get("usage"),
            actor_client=calling_client(request),
        )
        return Response(RunSerializer(closed).data)
