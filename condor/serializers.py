from django.core.exceptions import ImproperlyConfigured
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


class ReadOnlyModelSerializer(serializers.ModelSerializer):
    """A ModelSerializer for answers only, whose fields are worked out once per class.

    DRF builds a ModelSerializer's fields afresh for every instance, from the model's
    metadata: about 3 ms of CPU for an approval's 29 fields, on every gate suspend,
    decision and resume. The fields depend on the class alone (Meta and the declared
    fields), so they are built once and each instance binds shallow copies of them.
    A shallow copy is enough because nothing here writes to a field: every field is
    read-only (checked when they are built) and none is a nested serializer.
    """

    def get_fields(self):
        cls = type(self)
        prototypes = cls.__dict__.get("_field_prototypes")
        if prototypes is None:
            prototypes = super().get_fields()
            for name, field in prototypes.items():
                if not field.read_only or isinstance(field, serializers.BaseSerializer):
                    raise ImproperlyConfigured(f"{cls.__name__}.{name} must be a read-only field, not a serializer.")
            cls._field_prototypes = prototypes  # per class: a subclass builds its own
        return {name: _shallow_copy(field) for name, field in prototypes.items()}


def _shallow_copy(field):
    # What copy.copy does for a plain object, without its generic __reduce_ex__ round (~5x faster).
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    return clone


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
