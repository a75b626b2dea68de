from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from condor.auth import calling_client
from condor.schema import errors
from condor.scoping import owned_session
from sessions_app.filters import SessionFilter
from sessions_app.models import Session
from sessions_app.serializers import SessionCreateSerializer, SessionSerializer


class SessionListCreate(generics.GenericAPIView):
    serializer_class = SessionSerializer
    filterset_class = SessionFilter

    def get_queryset(self):
        return Session.objects.filter(client=calling_client(self.request)).order_by("-created_at", "-pk")

    # 400: a filter value outside its choices (tainted=maybe, autonomy=…). `tainted` is
    # the strings true/false (drf-spectacular would call it a boolean with string values).
    @extend_schema(responses={200: SessionSerializer(many=True), **errors(400, 401)},
                   parameters=[OpenApiParameter("tainted", str, enum=["true", "false"])])
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


class SessionDetail(generics.GenericAPIView):
    serializer_class = SessionSerializer

    @extend_schema(responses={200: SessionSerializer, **errors(401, 404)})
    def get(self, request, session_id):
        return Response(SessionSerializer(owned_session(request, session_id)).data)
