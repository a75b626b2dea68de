from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.hashing import beyond_safe_numbers
from core.identifiers import TOOL_NAME_RULE, is_tool_name
from registry.policy import ToolSpec

# The limits of a descriptor's identity_args: how many, and how long a name.
MAX_IDENTITY_ARGS = 20
MAX_ARG_NAME_CHARS = 120


def _valid_arg_name(name) -> bool:
    return isinstance(name, str) and 0 < len(name) <= MAX_ARG_NAME_CHARS and name.isprintable() and name == name.strip()


class PolicyClassChoice(models.TextChoices):
    READ = "read"
    MUTATE = "mutate"
    EXEC = "exec"
    COMMS = "comms"


class TierChoice(models.TextChoices):
    LOW = "low"
    HIGH = "high"


class TrustChoice(models.TextChoices):
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class ToolDescriptor(models.Model):
    """A tool in the governed registry. The policy engine reads it as a ToolSpec."""

    name = models.CharField(max_length=120, unique=True)
    description = models.TextField(blank=True)
    # Null = not declared: resolution falls through to the static registry,
    # then to metadata.mutating, then to read (SPEC section 2).
    policy_class = models.CharField(max_length=16, choices=PolicyClassChoice.choices, null=True, blank=True)
    hitl_tier = models.CharField(max_length=8, choices=TierChoice.choices, null=True, blank=True)
    trust = models.CharField(max_length=16, choices=TrustChoice.choices, default=TrustChoice.TRUSTED)
    allowed_hosts = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Four eyes: how many distinct reviewers must approve the same payload (SPEC section 10).
    approvals_required = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(3)],
        help_text="Distinct reviewers who must approve a call of this tool (1 to 3).",
    )
    # Arguments that name the patient (besides patient_ref, patient_id and mrn, always locked):
    # a reviewer's edit may not change them (approvals/locked_args.py).
    identity_args = models.JSONField(
        default=list,
        blank=True,
        help_text=f"Top-level argument names that identify the patient (at most {MAX_IDENTITY_ARGS}): a reviewer "
        "may not change them when editing a call. patient_ref, patient_id and mrn are always locked.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "approvals_tooldescriptor"  # the table it had before the layout move
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                name="mutate_tool_declares_tier",
                # IN alone would pass a NULL tier: a CHECK is only violated by false, not unknown.
                condition=~models.Q(policy_class="mutate")
                | models.Q(hitl_tier__isnull=False, hitl_tier__in=TierChoice.values),
                violation_error_message="A mutate tool must declare its HITL tier (low or high).",
            ),
            models.CheckConstraint(
                name="tool_quorum_1_to_3",
                condition=models.Q(approvals_required__gte=1, approvals_required__lte=3),
                violation_error_message="A tool needs 1 to 3 approvals.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        errors = {}
        if not is_tool_name(self.name):
            errors["name"] = f"A tool name must be {TOOL_NAME_RULE}."
        if self.policy_class == PolicyClassChoice.MUTATE and not self.hitl_tier:
            errors["hitl_tier"] = "A mutate tool must declare its HITL tier: low or high."
        if not isinstance(self.allowed_hosts, list) or not all(
            isinstance(host, str) and host.strip() for host in self.allowed_hosts
        ):
            errors["allowed_hosts"] = "Allowed hosts must be a list of host names."
        if (
            not isinstance(self.identity_args, list)
            or len(self.identity_args) > MAX_IDENTITY_ARGS
            or not all(_valid_arg_name(name) for name in self.identity_args)
        ):
            errors["identity_args"] = (
                f"Identity args must be a list of at most {MAX_IDENTITY_ARGS} argument names "
                f"(1 to {MAX_ARG_NAME_CHARS} printable characters each)."
            )
        if not isinstance(self.metadata, dict):
            errors["metadata"] = "Metadata must be a JSON object."
        elif beyond_safe_numbers(self.metadata):
            errors["metadata"] = (
                "Metadata numbers must be within ±(2^53−1): the audit log of this change could "
                "not be verified with a larger one."
            )
        if errors:
            raise ValidationError(errors)

    def to_spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            policy_class=self.policy_class or None,
            hitl_tier=self.hitl_tier or None,
            trust=self.trust,
            allowed_hosts=tuple(self.allowed_hosts or ()),
            metadata=dict(self.metadata or {}),
            description=self.description,
            approvals_required=self.approvals_required,
            identity_args=tuple(self.identity_args or ()),
        )
