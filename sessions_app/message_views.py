from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from core.schema import errors
from core.serializers import validated
from sessions_app.messages import append_message, drop_message
from sessions_app.models import Message
from sessions_app.pagination import OldestFirst
from sessions_app.scoping import owned_session
from sessions_app.serializers import MessageCreateSerializer, MessageSerializer


class MessageListAppend(generics.GenericAPIView):
    serializer_class = MessageSerializer
    pagination_class = OldestFirst
    queryset = Message.objects.none()  # for the schema; get() scopes to the owned session

    @extend_schema(
        responses={
            200: MessageSerializer(many=True),
            **errors(
                400, 401, 404, e400="invalid_cursor: a cursor the server did not send; ask for the first page again."
            ),
        }
    )
    def get(self, request, session_id):
        session = owned_session(request, session_id)
        page = self.paginate_queryset(Message.objects.filter(session=session))
        return self.get_paginated_response(MessageSerializer(page, many=True).data)

    @extend_schema(
        request=MessageCreateSerializer,
        responses={
            201: MessageSerializer,
            **errors(400, 401, 404, 409, e409="message_exists: the session already has a message with this id."),
        },
    )
    def post(self, request, session_id):
        session = owned_session(request, session_id)
        body = validated(MessageCreateSerializer, request.data)
        message = append_message(
            session, role=body["role"], parts=body["parts"], run_id=body.get("run"), message_id=body.get("id")
        )
        return Response(MessageSerializer(message).data, status=status.HTTP_201_CREATED)


class MessageDetail(APIView):
    @extend_schema(responses={200: MessageSerializer, **errors(401, 404)})
    def get(self, request, session_id, message_id):
        session = owned_session(request, session_id)
        message = Message.objects.filter(session=session, message_id=message_id).first()
        if message is None:
            raise NotFound("No such message in this session.")
        return Response(MessageSerializer(message).data)

    @extend_schema(responses={204: None, **errors(401, 404)})
    def delete(self, request, session_id, message_id):
        drop_message(owned_session(request, session_id), message_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
