from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers

from core.errors import STABLE_CODES


def _is_flat(field) -> bool:
    """A field with no fields inside it (no nested serializer, no ListField/DictField child),
    so a shallow copy of it shares nothing that is bound to its parent."""
    return not isinstance(field, serializers.BaseSerializer) and not hasattr(field, "child")


def _shallow_copy(field):
    # What copy.copy does for a plain object, without its generic __reduce_ex__ round (~5x faster).
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    return clone


def _prototypes(serializer, build):
    """The fields of `serializer`'s class as `build()` makes them, made once per class (None: not flat)."""
    cls = type(serializer)
    if "_field_prototypes" not in cls.__dict__:  # per class: a subclass builds its own
        fields = build()
        cls._field_prototypes = fields if all(_is_flat(field) for field in fields.values()) else None
    return cls._field_prototypes


class StrictSerializer(serializers.Serializer):
    """Input serializer that refuses fields it does not know, instead of silently dropping them.

    A request body's serializer is made for every request, and DRF deep-copies every
    declared field for it (a third of a gate call's validation). A flat serializer (no
    nested serializer or child field) binds shallow copies of fields made once per class
    instead: validating a value reads a field's settings and validators, never writes them.
    """

    def get_fields(self):
        prototypes = _prototypes(self, super().get_fields)
        if prototypes is None:
            return super().get_fields()
        return {name: _shallow_copy(field) for name, field in prototypes.items()}

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
    metadata: milliseconds of CPU for an approval's fields, on every gate suspend,
    decision and resume. The fields depend on the class alone (Meta and the declared
    fields), so they are built once and each instance binds shallow copies of them.
    A shallow copy is enough because nothing here writes to a field: every field is
    read-only and flat (checked when they are built).
    """

    def get_fields(self):
        return {name: _shallow_copy(field) for name, field in _read_only_prototypes(self).items()}

    def to_representation(self, instance):
        """DRF's Serializer.to_representation, read off a plan made once per class (`representation_plan_of`).

        DRF binds every field to each instance (`self.fields`), then walks its source
        for each attribute: a fifth of a resume's Python time for the approval and the
        run it answers with. What a field writes depends on its settings alone (a
        method field: on this serializer's method), so a plan made once serves every
        instance. A field the plan cannot take (a relation, a dotted source) leaves the
        class to DRF's own walk.
        """
        plan = representation_plan_of(self)
        if plan is None:
            return super().to_representation(instance)
        answer = {}
        for name, attribute, method, write in plan:
            value = getattr(self, method)(instance) if method else getattr(instance, attribute)
            answer[name] = None if value is None else write(value)
        return answer


def _read_only_prototypes(serializer) -> dict:
    prototypes = _prototypes(serializer, super(ReadOnlyModelSerializer, serializer).get_fields)
    if prototypes is None or not all(field.read_only for field in prototypes.values()):
        raise ImproperlyConfigured(
            f"{type(serializer).__name__}: every field must be read-only, with no fields inside."
        )
    return prototypes


def _identity(value):
    return value


def representation_plan_of(serializer) -> list[tuple] | None:
    """(name, attribute, method, write) for each field of `serializer`'s class, made once per class;
    None when some field is not a plain column (or a SerializerMethodField)."""
    cls = type(serializer)
    if "_representation_plan" not in cls.__dict__:
        model = cls.Meta.model
        columns = {field.attname for field in model._meta.concrete_fields}  # a relation's by its id (run_id)
        plan = []
        for name, field in _read_only_prototypes(serializer).items():
            if isinstance(field, serializers.SerializerMethodField):
                # A method answers None itself; DRF writes its answer as is.
                plan.append((name, None, field.method_name or f"get_{name}", _identity))
                continue
            source = field.source or name
            if source not in columns:
                plan = None
                break
            plan.append((name, source, None, field.to_representation))
        cls._representation_plan = plan
    return cls._representation_plan


def validated(serializer_class, data) -> dict:
    """Validate a request body; a failure becomes 400 invalid_payload and changes nothing."""
    body = serializer_class(data=data)
    body.is_valid(raise_exception=True)
    return body.validated_data


class ErrorSerializer(serializers.Serializer):
    """Every error answer (documentation only; core/errors.py builds the bodies)."""

    error = serializers.ChoiceField(
        choices=STABLE_CODES, help_text='The stable code to branch on (README, "Error codes").'
    )
    detail = serializers.CharField(help_text="A sentence for people; may change between releases.")
