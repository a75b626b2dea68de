from rest_framework import serializers

from approvals.models import Approval
from condor.serializers import JSONObjectField, StrictSerializer


class ApprovalSerializer(serializers.ModelSerializer):
    run = serializers.UUIDField(source="run_id", read_only=True)
    session = serializers.UUIDField(source="session_id", read_only=True)
    decided_by = serializers.SerializerMethodField()

    class Meta:
        model = Approval
        fields = ["id", "run", "session", "status", "tool", "op", "tool_call_id", "step_id", "reason_code",
                  "rule_id", "explanation", "hitl_tier", "message", "args", "approved_args", "payload_hash",
                  "resume_schema", "resume_data", "decided_by", "decision_reason", "requested_at",
                  "expires_at", "decided_at", "consumed_at"]
        read_only_fields = fields

    def get_decided_by(self, approval) -> str | None:
        return approval.decided_by.get_username() if approval.decided_by_id else None


_ID = {"max_length": 120, "allow_blank": False}


class ToolCallSerializer(StrictSerializer):
    tool_call_id = serializers.CharField(**_ID)
    step_id = serializers.CharField(**_ID)
    tool = serializers.CharField(**_ID)
    op = serializers.CharField(max_length=60, required=False, allow_blank=True, default="")
    args = JSONObjectField()
    metadata = JSONObjectField(required=False, default=dict)


class ClarificationSerializer(StrictSerializer):
    tool_call_id = serializers.CharField(**_ID)
    step_id = serializers.CharField(**_ID)
    tool = serializers.CharField(**_ID)
    op = serializers.CharField(max_length=60, required=False, allow_blank=True, default="")
    args = JSONObjectField(required=False, default=dict)
    message = serializers.CharField(max_length=4000)
    # Each item is {name, type?, hint?}, passed through whole: the schema builder
    # refuses bad names (400) and degrades a malformed hint to free text.
    missing = serializers.ListField(child=JSONObjectField(), allow_empty=False, max_length=50)


class ResumeSerializer(StrictSerializer):
    approval_id = serializers.UUIDField()
    args = JSONObjectField()


class ToolResultSerializer(StrictSerializer):
    output = serializers.JSONField(allow_null=True)
    is_error = serializers.BooleanField(required=False, default=False)
    untrusted = serializers.BooleanField(required=False, default=False)
    entities = serializers.ListField(child=JSONObjectField(), required=False, default=list)
    cards = serializers.ListField(child=JSONObjectField(), required=False, default=list)
