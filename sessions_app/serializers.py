from rest_framework import serializers

from condor.serializers import StrictSerializer
from sessions_app.models import AgeBandChoice, AutonomyChoice, Session


class SessionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Session
        fields = ["id", "title", "patient_ref", "care_unit", "autonomy", "consent", "age_band", "tainted",
                  "created_at", "updated_at"]
        read_only_fields = fields


class SessionCreateSerializer(StrictSerializer):
    title = serializers.CharField(max_length=200, required=False, allow_blank=True)
    patient_ref = serializers.CharField(max_length=120, required=False, allow_blank=True)
    care_unit = serializers.CharField(max_length=120, required=False, allow_blank=True)
    autonomy = serializers.ChoiceField(choices=AutonomyChoice.choices, required=False)
    consent = serializers.BooleanField(required=False)
    age_band = serializers.ChoiceField(choices=AgeBandChoice.choices, required=False)
