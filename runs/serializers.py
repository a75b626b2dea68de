import uuid

from rest_framework import serializers

from core.serializers import JSONObjectField, ReadOnlyModelSerializer, StrictSerializer
from core.text_limits import free_text
from runs.models import Run
from runs.states import RunState, TerminalReason
from sessions_app.models import AutonomyChoice


class _TerminalReasonField(serializers.ChoiceField):
    """The row keeps "" while the run is active (a CHECK constraint pins it); the API says null."""

    def to_representation(self, value):
        return value or None


class RunSerializer(ReadOnlyModelSerializer):
    session = serializers.UUIDField(source="session_id", read_only=True)
    terminal_reason = _TerminalReasonField(
        choices=[r.value for r in TerminalReason],
        allow_null=True,
        read_only=True,
        help_text="Why the run ended; null while it is active.",
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "session",
            "state",
            "terminal_reason",
            "autonomy",
            "flow_key",
            "engine",
            "summary",
            "usage",
            "created_at",
            "last_activity_at",
            "suspended_at",
            "closed_at",
        ]
        read_only_fields = fields


class OpenedRunSerializer(RunSerializer):
    """The 201 of POST sessions/{id}/runs/: the new run, and the active run it superseded."""

    superseded_run = serializers.SerializerMethodField(
        help_text="The session's run that was active until this one opened: it is now aborted `superseded`, "
        "and its open approvals are `withdrawn`. Null when no run was active."
    )

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "superseded_run"]
        read_only_fields = fields

    def get_superseded_run(self, run) -> uuid.UUID | None:
        superseded = self.context["superseded"]
        return superseded.pk if superseded is not None else None


class RunOpenSerializer(StrictSerializer):
    autonomy = serializers.ChoiceField(choices=AutonomyChoice.choices, required=False)
    flow_key = serializers.CharField(max_length=120, required=False, allow_blank=True)
    engine = serializers.CharField(max_length=120, required=False, allow_blank=True)


class TransitionSerializer(StrictSerializer):
    to = serializers.ChoiceField(choices=[s.value for s in RunState])


class CloseSerializer(StrictSerializer):
    reason = serializers.ChoiceField(choices=[r.value for r in TerminalReason])
    summary = serializers.CharField(required=False, allow_blank=True)
    usage = JSONObjectField(required=False)


class StopSerializer(StrictSerializer):
    reason = serializers.CharField(
        max_length=4000,
        validators=[free_text],
        help_text="Why the run must not go on; kept in the run's event log and the audit log.",
    )
