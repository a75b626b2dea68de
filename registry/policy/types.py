"""The policy gate's vocabulary: enums, plain-data inputs and outputs, and the rule table.

Every input field is a plain string rather than an enum so that values read from a
database row (or a policy class invented after this code shipped) pass through unchanged;
the engine decides what an unrecognised value means (it always fails closed). The enums
exist so callers can write ``PolicyClass.MUTATE`` instead of a bare literal: a StrEnum
member compares and hashes exactly like its string value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple


class PolicyClass(StrEnum):
    READ = "read"
    MUTATE = "mutate"
    EXEC = "exec"
    COMMS = "comms"


class Tier(StrEnum):
    LOW = "low"
    HIGH = "high"


class Trust(StrEnum):
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class Autonomy(StrEnum):
    AUTONOMOUS = "autonomous"  # the clinician typed the request
    GUARDED = "guarded"  # supervised
    AMBIENT = "ambient"  # supervised


class AgeBand(StrEnum):
    ADULT = "adult"
    TEEN = "teen"
    CHILD = "child"
    UNKNOWN = "unknown"  # decided as CHILD


class Decision(StrEnum):
    ALLOW = "allow"
    BLOCKED = "blocked"
    REQUIRE_APPROVAL = "require_approval"


# One shared read-only empty mapping: the default for every Mapping field, so building a
# ToolCall without args or metadata allocates nothing extra.
EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return EMPTY


# Mapping fields are excluded from hash/compare-by-hash so specs and calls stay hashable
# even when a caller hands in a plain dict (equality still compares them).
@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool descriptor: a database registry row or a built-in static entry."""

    name: str
    policy_class: str | None = None
    hitl_tier: str | None = None
    trust: str = Trust.TRUSTED.value
    allowed_hosts: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    description: str = ""
    # Four eyes: distinct reviewers who must approve the same payload (1 to 3, SPEC section 10).
    approvals_required: int = 1
    # Arguments that name the patient besides patient_ref, patient_id and mrn: a reviewer's edit
    # may not change them (approvals/locked_args.py). Not an axis of any verdict.
    identity_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A database row or a form hands over a list; a tuple keeps the spec immutable
        # and lets the egress check cache its parsed allow-list by value.
        if not isinstance(self.allowed_hosts, tuple):
            object.__setattr__(self, "allowed_hosts", tuple(self.allowed_hosts or ()))
        if not isinstance(self.identity_args, tuple):
            object.__setattr__(self, "identity_args", tuple(self.identity_args or ()))


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the agent runtime sent it; ``metadata`` is client-controlled."""

    tool: str
    op: str = ""
    args: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    metadata: Mapping[str, Any] = field(default_factory=_empty, hash=False)


@dataclass(frozen=True, slots=True)
class Context:
    """The run and session facts the matrix decides on. ``consent=True`` means granted."""

    autonomy: str
    tainted: bool
    consent: bool
    age_band: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """The gate's answer. ``effective_tier`` is what a reviewer's card shows and sorts by."""

    decision: Decision
    rule_id: str
    explanation: str
    policy_class: str | None
    effective_tier: str | None
    destructive: bool


class Rule(NamedTuple):
    decision: Decision
    explanation: str


_ALLOW, _BLOCK, _ASK = Decision.ALLOW, Decision.BLOCKED, Decision.REQUIRE_APPROVAL

# Every rule the gate can emit, in evaluation order (egress first, then SPEC section 2's
# matrix rows 1-14, with 11a for a low-tier write that names no op). This is the one place a
# rule_id is tied to its decision and to the sentence a clinician reads on the card, in the
# audit log and in the simulator.
RULES: Mapping[str, Rule] = MappingProxyType({
    "egress.no-declared-flows": Rule(_BLOCK, "This tool sends information outside the clinic but has no approved destinations, so it was blocked."),
    "egress.host-not-allowed": Rule(_BLOCK, "This call would contact an address the tool is not approved to reach, so it was blocked."),
    "unregistered.fail-closed": Rule(_ASK, "Condor does not know this kind of action yet, so a clinician must approve it before it runs."),
    "unknown.fail-closed": Rule(_ASK, "Condor cannot tell whether this action reads, changes or sends patient data, so a clinician must approve it before it runs."),
    "read.allow": Rule(_ALLOW, "Looking up information does not change the record, so it runs without approval."),
    "comms.child-blocked": Rule(_BLOCK, "Sending information outside the clinic is never allowed for a child or a patient whose age is unknown."),
    "taint.external-approval": Rule(_ASK, "This conversation has read content from outside the clinic (a web page or an uploaded document) that could steer the agent, so sending information out or running code needs a clinician's approval."),
    "comms.autonomous-consented-allow": Rule(_ALLOW, "The clinician asked for this directly and the patient has consented, so it is sent without further approval."),
    "comms.approval": Rule(_ASK, "Sending information outside the clinic needs a clinician's approval unless the clinician asked for it and the patient consented."),
    "exec.always-approval": Rule(_ASK, "Running a script can do almost anything, so it always needs a clinician's approval."),
    "mutate.missing-tier-approval": Rule(_ASK, "This action changes the patient's record and has no risk level set, so it is treated as high-risk and needs a clinician's approval."),
    "mutate.high-tier-always-approval": Rule(_ASK, "Prescriptions, medication changes, billing claims and signed documents always need a clinician's approval before they go into the record."),
    "mutate.missing-op-approval": Rule(_ASK, "The agent did not say what kind of change this is, so it is treated like a deletion and needs a clinician's approval."),
    "mutate.destructive-op-approval": Rule(_ASK, "Deleting, voiding, removing, cancelling, purging, revoking or archiving clinical data always needs a clinician's approval."),
    "mutate.low-tier-supervised-approval": Rule(_ASK, "The agent proposed this change itself; no clinician asked for it, so a clinician must approve it."),
    "mutate.low-tier-child-consent-approval": Rule(_ASK, "Changes to a child's record, or one whose age is unknown, need a clinician's approval until consent is recorded."),
    "mutate.low-tier-autonomous-allow": Rule(_ALLOW, "The clinician asked for this routine change directly, so it is saved without further approval."),
})  # fmt: skip

RULE_IDS: tuple[str, ...] = tuple(RULES)

_KNOWN_CLASSES = frozenset(PolicyClass)

# Verdicts are immutable values drawn from a small space (rule x class x tier x verb
# kind), so they are built once and reused instead of allocated on every gate call.
_VERDICTS: dict[tuple[str, str | None, str | None, bool], Verdict] = {}


def make_verdict(rule_id: str, policy_class: str | None, effective_tier: str | None, destructive: bool) -> Verdict:
    key = (rule_id, policy_class, effective_tier, destructive)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        rule = RULES[rule_id]
        verdict = Verdict(rule.decision, rule_id, rule.explanation, policy_class, effective_tier, destructive)
        # Only memoise the bounded space; an unrecognised class string comes from data
        # and must not grow this dict without limit.
        if policy_class is None or policy_class in _KNOWN_CLASSES:
            _VERDICTS[key] = verdict
    return verdict


def effective_tier(policy_class: str | None, hitl_tier: str | None, destructive: bool) -> str | None:
    """The tier a reviewer's card shows and sorts by (not an input to the matrix).

    None for a read; "low" only for a non-destructive mutate whose declared tier is
    exactly "low"; "high" for everything else -- high, missing or unrecognised tiers,
    destructive verbs, exec, comms, unrecognised classes and unregistered tools.
    """
    if policy_class == "read":
        return None
    if policy_class == "mutate" and hitl_tier == "low" and not destructive:
        return "low"
    return "high"
