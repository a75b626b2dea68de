from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from approvals import bound_context, cards
from approvals.card_context import RATIONALE_MAX_CHARS
from approvals.models import Approval, ReasonCode
from core import identifiers
from core.serializers import JSONObjectField, ReadOnlyModelSerializer, StrictSerializer
from runs.serializers import RunSerializer


class BoundContextSerializer(serializers.Serializer):
    """The patient context an approval was given for: the session's when the call parked (SPEC section 4)."""

    patient_ref = serializers.CharField()
    age_band = serializers.CharField()
    consent = serializers.BooleanField()


class ApprovalSerializer(ReadOnlyModelSerializer):
    run = serializers.UUIDField(source="run_id", read_only=True)
    bound_context = serializers.SerializerMethodField(
        help_text="The patient context the card showed and the approval is bound to: a resume or cold replay in a "
        "session whose patient_ref, age_band or consent differs is 409 context_changed."
    )
    locked_args = serializers.SerializerMethodField(
        help_text="The args an edit may not change (they name the patient), as paths: `patient_ref`, "
        "`order.mrn`, `orders[0].mrn`. Changing one is 400 locked_arg."
    )
    session = serializers.UUIDField(source="session_id", read_only=True)
    decided_by = serializers.SerializerMethodField()
    approvals = serializers.SerializerMethodField(
        help_text="Four eyes: the approvals counted so far of the payload on the table ({reviewer, at, reason})."
    )
    claimed_by = serializers.SerializerMethodField(help_text="The reviewer holding a live claim, if any.")
    claim_expires_at = serializers.SerializerMethodField()

    class Meta:
        model = Approval
        fields = [
            "id",
            "run",
            "session",
            "status",
            "tool",
            "op",
            "tool_call_id",
            "step_id",
            "reason_code",
            "rule_id",
            "explanation",
            "hitl_tier",
            "message",
            "bound_context",
            "args",
            "approved_args",
            "locked_args",
            "payload_hash",
            "resume_schema",
            "resume_data",
            "decided_by",
            "decision_reason",
            "requested_at",
            "expires_at",
            "decided_at",
            "consumed_at",
            "approvals_required",
            "approvals",
            "claimed_by",
            "claim_expires_at",
            "escalated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(BoundContextSerializer)
    def get_bound_context(self, approval) -> dict:
        return bound_context.bound(approval)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_locked_args(self, approval) -> list[str]:
        return approval.locked_args

    def get_decided_by(self, approval) -> str | None:
        return approval.decided_by.get_username() if approval.decided_by_id else None

    def get_approvals(self, approval) -> list[dict]:
        return cards.counted_approvals(approval)

    def get_claimed_by(self, approval) -> str | None:
        return cards.claim_and_quorum(approval)["claimed_by"]

    def get_claim_expires_at(self, approval) -> str | None:
        return cards.claim_and_quorum(approval)["claim_expires_at"]


# Names are taken as sent: trimmed, " delete" would be judged, stored and shown as another
# name than the agent's (SPEC section 2: anything but the alphabet is a 400).
_ID = {"max_length": 120, "allow_blank": False, "trim_whitespace": False}


class _Whole(RegexValidator):
    r"""`regex` over the whole value. Its pattern, ^...$ rather than \A...\Z, is what the OpenAPI
    schema shows (an ECMAScript regex too), but Python's $ also matches before a final newline,
    so the check itself is a fullmatch."""

    def __init__(self, regex, rule: str):
        super().__init__(f"^(?:{regex.pattern})$", message=f"Must be {rule}.")
        self.whole = regex

    def __call__(self, value):
        if not isinstance(value, str) or self.whole.fullmatch(value) is None:
            raise ValidationError(self.message, code=self.code, params={"value": value})


def _matching(regex, rule: str) -> list:
    return [_Whole(regex, rule)]


def _tool_call_id_field():
    return serializers.CharField(
        **_ID,
        validators=_matching(identifiers.TOOL_CALL_ID_RE, identifiers.TOOL_CALL_ID_RULE),
        help_text=f"Up to 120 characters: {identifiers.TOOL_CALL_ID_RULE}.",
    )


def _tool_field():
    return serializers.CharField(
        **_ID,
        validators=_matching(identifiers.TOOL_NAME_RE, identifiers.TOOL_NAME_RULE),
        help_text=f"The tool's registered name, {identifiers.TOOL_NAME_RULE}.",
    )


def _op_field():
    return serializers.CharField(
        max_length=60,
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=False,
        validators=_matching(identifiers.TOOL_NAME_RE, identifiers.TOOL_NAME_RULE),
        help_text=f"The verb, {identifiers.TOOL_NAME_RULE} (e.g. create, update, delete_all).",
    )


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": True,
        "properties": {
            "rationale": {
                "type": "string",
                "maxLength": RATIONALE_MAX_CHARS,
                "description": (
                    "Why the agent wants this call, in its own words for a clinician: the card shows it as "
                    f'"Why the agent wants this" (plain text, never markup). At most {RATIONALE_MAX_CHARS} characters.'
                ),
            },
            "mutating": {
                "type": "boolean",
                "description": "True promotes a tool Condor does not know to a write "
                "(SPEC section 2); it never lowers a known tool's class.",
            },
        },
    }
)
class ToolCallMetadataField(JSONObjectField):
    """The client's metadata: any JSON object; the keys Condor reads are checked."""

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        rationale = data.get("rationale")
        if rationale is not None and not isinstance(rationale, str):
            raise serializers.ValidationError("'rationale' must be a string.")
        if rationale is not None and len(rationale) > RATIONALE_MAX_CHARS:
            raise serializers.ValidationError(
                f"'rationale' is {len(rationale)} characters; at most {RATIONALE_MAX_CHARS} are shown to a reviewer."
            )
        return data


class ToolCallSerializer(StrictSerializer):
    tool_call_id = _tool_call_id_field()
    step_id = serializers.CharField(max_length=120)
    tool = _tool_field()
    op = _op_field()
    args = JSONObjectField()
    metadata = ToolCallMetadataField(
        required=False,
        default=dict,
        help_text="Client metadata, stored with the call. `rationale` is shown on the card; `mutating` is read "
        "by the policy engine; other keys are kept for the audit log.",
    )


class ClarificationSerializer(StrictSerializer):
    tool_call_id = _tool_call_id_field()
    step_id = serializers.CharField(max_length=120)
    tool = _tool_field()
    op = _op_field()
    args = JSONObjectField(required=False, default=dict)
    message = serializers.CharField(max_length=4000)
    # Each item is {name, type?, hint?}, passed through whole: the schema builder
    # refuses bad names (400) and degrades a malformed hint to free text.
    missing = serializers.ListField(child=JSONObjectField(), allow_empty=False, min_length=1, max_length=50)


class ResumeSerializer(StrictSerializer):
    approval_id = serializers.UUIDField()
    args = JSONObjectField()


class ToolResultSerializer(StrictSerializer):
    output = serializers.JSONField(allow_null=True)
    is_error = serializers.BooleanField(required=False, default=False)
    untrusted = serializers.BooleanField(required=False, default=False)
    entities = serializers.ListField(child=JSONObjectField(), required=False, default=list)
    cards = serializers.ListField(child=JSONObjectField(), required=False, default=list)


# --- Request and response shapes for the OpenAPI schema (the views build these bodies) --------


class DecisionSerializer(StrictSerializer):
    """A reviewer's decision: `{approved, reason?, edited_args?}` for an approval; `{values}` answers a
    clarification and `{approved: false, reason}` declines it. A rejection or a decline denies that call
    only; add `stop_run: true` to end the run as well (`approval_denied`). Any other field is refused."""

    approved = serializers.BooleanField(required=False)
    reason = serializers.CharField(
        required=False, max_length=4000, help_text="Required when rejecting or declining; at most 4000 characters."
    )
    edited_args = serializers.DictField(
        required=False, help_text="Approve these arguments instead of the original ones; only with approved=true."
    )
    values = serializers.DictField(
        required=False, help_text="Answers to a clarification, validated against the approval's resume_schema."
    )
    stop_run = serializers.BooleanField(
        required=False,
        default=False,
        help_text="With approved=false: also end the run (approval_denied) and "
        "withdraw its other open approvals, granted ones included.",
    )
    payload_hash = serializers.RegexField(
        r"^[0-9a-f]{64}$",
        required=False,
        help_text="With approved=true: the payload_hash of the card the reviewer was shown. If another "
        "reviewer's edit has put other args on the table since, the approval is 409 payload_changed; "
        "without it, the agent's args as first sent are the ones approved (approvals/seen.py).",
    )


class GateVerdictSerializer(serializers.Serializer):
    """200 from the gate: the call may run now, or must not run at all."""

    decision = serializers.ChoiceField(choices=["allow", "blocked"])
    rule_id = serializers.CharField()
    explanation = serializers.CharField()
    tool_call_id = serializers.CharField()
    args = serializers.DictField(help_text="The arguments to run (a consumed prior grant's approved ones).")
    approval_id = serializers.UUIDField(required=False, help_text="The prior grant consumed by this call, if any.")


class SuspendedSerializer(serializers.Serializer):
    """202: the run is parked until a reviewer decides; wait on the stream, then resume."""

    decision = serializers.ChoiceField(choices=["suspended"])
    rule_id = serializers.CharField()
    explanation = serializers.CharField()
    reason_code = serializers.ChoiceField(choices=ReasonCode.choices)
    approval = ApprovalSerializer()
    frames = serializers.ListField(
        child=serializers.DictField(), help_text="AI SDK v6 UI message chunks showing the suspend."
    )


class ToolResultReceiptSerializer(serializers.Serializer):
    tool_call_id = serializers.CharField()
    session_tainted = serializers.BooleanField(help_text="Whether the session is tainted after this result.")
    reported_at = serializers.DateTimeField()


class ResumeResultSerializer(serializers.Serializer):
    """200 from resume: run exactly `args`; `values` holds a clarification's answers."""

    proceed = serializers.BooleanField()
    args = serializers.DictField()
    values = serializers.DictField()
    approval = ApprovalSerializer()
    run = RunSerializer()
