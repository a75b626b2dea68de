from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from agents.auth import calling_client
from core.schema import errors
from core.serializers import validated
from sessions_app import lifecycle
from sessions_app.models import Session
from sessions_app.scoping import owned_session
from sessions_app.serializers import (
    SessionDetailSerializer,
    SessionUpdateSerializer,
)


def _detail(session_id) -> dict:
    session = Session.objects.prefetch_related("entities").get(pk=session_id)
    return SessionDetailSerializer(session).data


class SessionDetail(generics.GenericAPIView):
    serializer_class = SessionDetailSerializer

    @extend_schema(responses={200: SessionDetailSerializer, **errors(401, 404)})
    def get(self, request, session_id):
        return Response(_detail(owned_session(request, session_id).pk))

    @extend_schema(
        request=SessionUpdateSerializer,
        responses={
            200: SessionDetailSerializer,
            **errors(
                400,
                401,
                404,
                409,
                e409="session_has_open_approvals: a new patient_ref while an approval of the session is "
                "pending, or approved and not yet used; nothing was changed.",
            ),
        },
        description="Rename or re-link (`patient_ref`, `care_unit`). Audited with the old and new values. "
        "An approval is bound to the patient it was given for, so `patient_ref` cannot "
        "change while the session holds one pending or approved and not yet used (409 "
        "`session_has_open_approvals`): the re-link is refused, the approvals are left as "
        "they are. Use, reject or let them expire (or close the run) first.",
    )
    def patch(self, request, session_id):
        session = owned_session(request, session_id)
        changes = validated(SessionUpdateSerializer, request.data)
        lifecycle.update_session(session.pk, changes, client=calling_client(request))
        return Response(_detail(session.pk))

    @extend_schema(
        responses={204: None, **errors(401, 404)},
        description="Delete the session: its active run is aborted `user_stopped` and its pending "
        "approvals expire. The audit log keeps every row; the session and everything in "
        "it answer 404 afterwards.",
    )
    def delete(self, request, session_id):
        session = owned_session(request, session_id)
        lifecycle.delete_session(session.pk, client=calling_client(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
