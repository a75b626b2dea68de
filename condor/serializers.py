from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Input serializer that refuses fields it does not know, instead of silently dropping them."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({"non_field_errors": [f"Unknown field(s): {', '.join(unknown)}."]})
        return super().to_internal_value(data)


class JSONObjectField(serializers.JSONField):
    default_error_messages = {"not_object": "Must be a JSON object."}

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.fail("not_object")
        return data


def validated(serializer_class, data) -> dict:
    """Validate a request body; a failure becomes 400 invalid_payload and changes nothing."""
    body = serializer_class(data=data)
    body.is_valid(raise_exception=True)
    return body.validated_data


class ErrorSerializer(serializers.Serializer):
    """Every error answer (documentation only; condor/errors.py builds the bodies)."""

    error = serializers.CharField(help_text="Stable code to branch on, e.g. invalid_payload, not_found, "
                                            "run_state_transition, approval_expired.")
    detail = serializers.CharField(help_text="A sentence for people; may change between releases.")
