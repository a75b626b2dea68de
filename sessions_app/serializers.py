from rest_framework import serializers

from condor.serializers import StrictSerializer
from sessions_app.models import AgeBandChoice, AutonomyChoice, LinkedEntity, Session


class SessionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Session
        fields = ["id", "title", "patient_ref", "care_unit", "autonomy", "consent", "age_band", "tainted",
                  "created_at", "updated_at"]
        read_only_fields = fields


class LinkedEntitySerializer(serializers.ModelSerializer):
    run = serializers.UUIDField(source="run_id")

    class Meta:
        model = LinkedEntity
        fields = ["kind", "ref", "label", "run", "tool_call_id", "linked_at"]
        read_only_fields = fields


class SessionDetailSerializer(SessionSerializer):
    entities = LinkedEntitySerializer(many=True, read_only=True,
                                      help_text="The session's current entity of each kind (the latest a "
                                                "tool result reported).")

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "entities"]
        read_only_fields = fields


class SessionCreateSerializer(StrictSerializer):
    title = serializers.CharField(max_length=200, required=False, allow_blank=True)
    patient_ref = serializers.CharField(max_length=120, required=False, allow_blank=True)
    care_unit = serializers.CharField(max_length=120, required=False, allow_blank=True)
    autonomy = serializers.ChoiceField(choices=AutonomyChoice.choices, required=False)
    consent = serializers.BooleanField(required=False)
    age_band = serializers.ChoiceField(choices=AgeBandChoice.choices, required=False)


class SessionUpdateSerializer(StrictSerializer):
    """Rename or re-link. The policy context (autonomy, consent, age band) is fixed at creation."""

    title = serializers.CharField(max_length=200, required=False, allow_blank=True)
    patient_ref = serializers.CharField(max_length=120, required=False, allow_blank=True)
    care_unit = serializers.CharField(max_length=120, required=False, allow_blank=True)
