from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from condor.auth import calling_client
from condor.scoping import owned_run, owned_session
from condor.serializers import validated
from runs import spine
from runs.serializers import CloseSerializer, RunOpenSerializer, RunSerializer, TransitionSerializer


class RunOpen(APIView):
    @extend_schema(request=RunOpenSerializer, responses={201: RunSerializer})
    def post(self, request, session_id):
        session = owned_session(request, session_id)
        run = spine.open_run(session, **validated(RunOpenSerializer, request.data))
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)


class RunDetail(APIView):
    @extend_schema(responses=RunSerializer)
    def get(self, request, run_id):
        return Response(RunSerializer(owned_run(request, run_id)).data)


class RunTransition(APIView):
    @extend_schema(request=TransitionSerializer, responses=RunSerializer)
    def post(self, request, run_id):
        run = owned_run(request, run_id)
        return Response(RunSerializer(spine.transition(run.pk, validated(TransitionSerializer, request.data)["to"])).data)


class RunClose(APIView):
    @extend_schema(request=CloseSerializer, responses=RunSerializer)
    def post(self, request, run_id):
        run = owned_run(request, run_id)
        body = validated(CloseSerializer, request.data)
        closed = spine.close(run.pk, body["reason"], summary=body.get("summary", ""), usage=body.get("usage"),
                             actor_client=calling_client(request))
        return Response(RunSerializer(closed).data)
