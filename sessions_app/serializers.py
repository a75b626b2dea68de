from rest_framework import serializers

from core.serializers import JSONObjectField, StrictSerializer
from core.text_limits import single_line
from sessions_app.models import (
    CARE_UNIT_MAX_LENGTH,
    AgeBandChoice,
    AutonomyChoice,
    LinkedEntity,
    Message,
    MessageRole,
    Session,
)


class SessionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Session
        fields = [
            "id",
            "title",
            "patient_ref",
            "care_unit",
            "autonomy",
            "consent",
            "age_band",
            "tainted",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class LinkedEntitySerializer(serializers.ModelSerializer):
    run = serializers.UUIDField(source="run_id")

    class Meta:
        model = LinkedEntity
        fields = ["kind", "ref", "label", "run", "tool_call_id", "linked_at"]
        read_only_fields = fields


class SessionDetailSerializer(SessionSerializer):
    entities = LinkedEntitySerializer(
        many=True,
        read_only=True,
        help_text="The session's current entity of each kind (the latest a tool result reported).",
    )

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "entities"]
        read_only_fields = fields


class SessionCreateSerializer(StrictSerializer):
    title = serializers.CharField(max_length=200, required=False, allow_blank=True, validators=[single_line])
    patient_ref = serializers.CharField(max_length=120, required=False, allow_blank=True, validators=[single_line])
    care_unit = serializers.CharField(
        max_length=CARE_UNIT_MAX_LENGTH, required=False, allow_blank=True, validators=[single_line]
    )
    autonomy = serializers.ChoiceField(choices=AutonomyChoice.choices, required=False)
    consent = serializers.BooleanField(required=False)
    age_band = serializers.ChoiceField(choices=AgeBandChoice.choices, required=False)


class SessionUpdateSerializer(StrictSerializer):
    """Rename or re-link. The policy context (autonomy, consent, age band) is fixed at creation."""

    title = serializers.CharField(max_length=200, required=False, allow_blank=True, validators=[single_line])
    patient_ref = serializers.CharField(max_length=120, required=False, allow_blank=True, validators=[single_line])
    care_unit = serializers.CharField(
        max_length=CARE_UNIT_MAX_LENGTH, required=False, allow_blank=True, validators=[single_line]
    )


class MessageCreateSerializer(StrictSerializer):
    id = serializers.RegexField(
        r"^[A-Za-z0-9_.:-]{1,120}$",
        required=False,
        help_text="The client's message id (useChat's); Condor makes one when absent.",
    )
    role = serializers.ChoiceField(choices=MessageRole.choices)
    parts = serializers.ListField(
        child=JSONObjectField(),
        min_length=1,
        max_length=500,
        help_text="AI SDK v6 UIMessage parts, each an object with a string `type`.",
    )
    run = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="The run this (assistant) message belongs to; history merges that run's gated calls into it.",
    )

    def validate_parts(self, parts):
        for index, part in enumerate(parts):
            if not isinstance(part.get("type"), str) or not part["type"]:
                raise serializers.ValidationError(f"Part {index} needs a string 'type'.")
        return parts


class MessageSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="message_id")
    run = serializers.UUIDField(source="run_id", allow_null=True)

    class Meta:
        model = Message
        fields = ["id", "role", "parts", "run", "created_at"]
        read_only_fields = fields


class UIMessageSerializer(serializers.Serializer):
    """An AI SDK v6 `UIMessage`, as `useChat` holds it."""

    id = serializers.CharField()
    role = serializers.ChoiceField(choices=MessageRole.choices)
    parts = serializers.ListField(
        child=serializers.DictField(),
        help_text=(
            "UIMessage parts. A gated call is a `tool-<name>` part whose `state` is `input-available`, "
            "`approval-requested`, `approval-responded`, `output-available`, `output-error` or `output-denied`, "
            "with `approval: {id, approved?, reason?}`; decisions and clarifications are `data-approval-decision` "
            "and `data-clarification` parts."
        ),
    )
