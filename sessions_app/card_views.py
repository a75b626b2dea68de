"""Pinned cards under sessions/{id}/pinned-cards/. Every write goes through sessions_app/pinned_cards.py."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.schema import errors
from core.serializers import JSONObjectField, StrictSerializer, validated
from core.text_limits import single_line
from sessions_app import pinned_cards
from sessions_app.models import PinnedCard
from sessions_app.scoping import owned_session


class PinnedCardSerializer(serializers.ModelSerializer):
    source_card = serializers.SerializerMethodField()

    class Meta:
        model = PinnedCard
        fields = ["id", "kind", "title", "data", "order", "source_card"]
        read_only_fields = fields

    def get_source_card(self, card) -> str | None:
        return card.source_card or None


class PinSerializer(StrictSerializer):
    """Either `source_card` (a card reported earlier in the session) or a new spec `{kind, title, data}`."""

    source_card = serializers.CharField(
        max_length=200,
        required=False,
        help_text="A reported card's identity: its own `id`, else `<tool_call_id>#<index in the result's cards>`.",
    )
    kind = serializers.CharField(required=False)
    title = serializers.CharField(required=False, allow_blank=True, validators=[single_line])
    data = JSONObjectField(required=False)
    order = serializers.IntegerField(min_value=0, required=False, help_text="Position; default: last.")

    def validate(self, attrs):
        spec = {k: attrs[k] for k in ("kind", "title", "data") if k in attrs}
        if ("source_card" in attrs) == bool(spec):
            raise serializers.ValidationError("Send either 'source_card' or a card spec {kind, title, data}.")
        return attrs


class CardUpdateSerializer(StrictSerializer):
    kind = serializers.CharField(required=False)
    title = serializers.CharField(required=False, allow_blank=True, validators=[single_line])
    data = JSONObjectField(required=False)
    order = serializers.IntegerField(min_value=0, required=False)


class ReorderSerializer(StrictSerializer):
    ids = serializers.ListField(child=serializers.UUIDField(), help_text="Every pinned card's id, in the new order.")


def _listing(session) -> list:
    return PinnedCardSerializer(PinnedCard.objects.filter(session=session).order_by("order"), many=True).data


class PinnedCardList(APIView):
    @extend_schema(responses={200: PinnedCardSerializer(many=True), **errors(401, 404)})
    def get(self, request, session_id):
        return Response(_listing(owned_session(request, session_id)))

    @extend_schema(
        request=PinSerializer,
        responses={
            201: PinnedCardSerializer,
            **errors(
                400, 401, 404, 422, e422="card_not_reported: no card with that identity was reported in this session."
            ),
        },
    )
    def post(self, request, session_id):
        session = owned_session(request, session_id)
        body = validated(PinSerializer, request.data)
        spec = {k: body[k] for k in ("kind", "title", "data") if k in body}
        card = pinned_cards.pin(
            session.pk, spec=spec or None, source_card=body.get("source_card"), order=body.get("order")
        )
        card.refresh_from_db()
        return Response(PinnedCardSerializer(card).data, status=status.HTTP_201_CREATED)


class PinnedCardDetail(APIView):
    @extend_schema(request=CardUpdateSerializer, responses={200: PinnedCardSerializer, **errors(400, 401, 404)})
    def patch(self, request, session_id, card_id):
        session = owned_session(request, session_id)
        card = pinned_cards.update(session.pk, card_id, validated(CardUpdateSerializer, request.data))
        card.refresh_from_db()
        return Response(PinnedCardSerializer(card).data)

    @extend_schema(responses={204: None, **errors(401, 404)})
    def delete(self, request, session_id, card_id):
        pinned_cards.unpin(owned_session(request, session_id).pk, card_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PinnedCardReorder(APIView):
    @extend_schema(request=ReorderSerializer, responses={200: PinnedCardSerializer(many=True), **errors(400, 401, 404)})
    def post(self, request, session_id):
        session = owned_session(request, session_id)
        pinned_cards.reorder(session.pk, validated(ReorderSerializer, request.data)["ids"])
        return Response(_listing(session))
