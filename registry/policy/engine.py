"""The policy gate: resolve the tool's class, check egress, then walk SPEC section 2's matrix.

Pure and synchronous: plain data in, a ``Verdict`` out, no Django and no I/O, so the
simulator, the API and the tests all call the very same function.

Fail-closed readings of values the SPEC does not list (documented here because they
are decisions, not accidents):

* ``age_band``: only "adult" and "teen" are not a child. "unknown" and any unrecognised
  string (including a different spelling such as "Adult") are decided as child.
* ``autonomy``: only "autonomous" is autonomous; anything else is supervised.
* ``consent`` counts as granted only when it is exactly ``True``; ``tainted`` counts as
  clean only when it is exactly ``False``.
* ``hitl_tier``: only "low" and "high" are tiers; None, "" or an unrecognised string is a
  missing tier (row 9) and shows as high on the card.
* ``policy_class``: None or "" is "not declared" (a blank database column); any other
  string outside read/mutate/exec/comms is an unrecognised class (row 2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .catalog import STATIC_REGISTRY
from .egress import egress_rule
from .types import (
    AgeBand,
    Autonomy,
    Context,
    PolicyClass,
    Tier,
    ToolCall,
    ToolSpec,
    Trust,
    Verdict,
    effective_tier,
    make_verdict,
)

DESTRUCTIVE_OPS = frozenset(
    {
        "delete",
        "void",
        "remove",
        "cancel",
        "discontinue",
        "archive",
        "purge",
        "erase",
        "destroy",
        "drop",
        "wipe",
        "truncate",
        "expunge",
        "revoke",
        "rm",
        "del",
    }
)
# Verbs this short stand inside everyday words ("confirm", "perform", "model", "deliver"): they
# count where they are a word part of their own, the longer ones anywhere.
_SHORT_VERBS = frozenset(verb for verb in DESTRUCTIVE_OPS if len(verb) < 4)
# A verb's other forms where its letters change: the final "e" goes ("deleting", "deletion",
# "removal", "erasure", "revocation", "destruction"). Forms that keep the whole verb ("deleted",
# "cancelling", "dropping", "destroying") are already found by the verb itself.
_INFLECTED_FORMS = (
    "deleti",
    "removi",
    "remova",
    "discontinui",
    "discontinua",
    "archivi",
    "archiva",
    "purgi",
    "erasi",
    "erasu",
    "wipi",
    "truncati",
    "expungi",
    "revoki",
    "revoca",
    "destruct",
)
_LONG_VERBS = tuple(sorted(DESTRUCTIVE_OPS - _SHORT_VERBS)) + _INFLECTED_FORMS
_SHORTEST_WORD = min(map(len, _SHORT_VERBS))
_LONGEST_SHORT_VERB = max(map(len, _SHORT_VERBS))

_READ, _MUTATE, _EXEC, _COMMS = "read", "mutate", "exec", "comms"
# Maps any spelling that hashes like a known class (str or PolicyClass member) to the
# plain string, so verdicts carry plain strings whatever the caller passed in.
_CLASSES = {c.value: c.value for c in PolicyClass}
_TIERS = {t.value: t.value for t in Tier}
_NOT_CHILD = frozenset({AgeBand.ADULT.value, AgeBand.TEEN.value})
_AUTONOMOUS = Autonomy.AUTONOMOUS.value


# What the API lets through (core/identifiers.py), plus the surrounding and inner
# whitespace a pure caller such as the simulator may hand in.
_READABLE_OP = re.compile(r"[A-Za-z0-9._\-\s]*", re.ASCII)
_SEPARATORS = re.compile(r"[._\-\s]+")
# Word parts: runs of letters split at separators and camelCase humps ("bulkRm" -> bulk, Rm;
# "DELAll" -> DEL, All), and runs of digits.
_WORD_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _short_verb_among(parts: list[str]) -> bool:
    """Whether consecutive word parts spell a short verb: "rm", "bulk_Del", or one split by
    separators ("r-m", "d.e.l", "de_l")."""
    for start in range(len(parts)):
        word = ""
        for part in parts[start : start + _LONGEST_SHORT_VERB]:
            word += part
            if word in _SHORT_VERBS:
                return True
            if len(word) >= _LONGEST_SHORT_VERB:
                break
    return False


def is_destructive(op: Any) -> bool:
    """True if one of DESTRUCTIVE_OPS stands in ``op``, in any mix of cases, separators inside
    a word removed ("de-lete", "de_lete", "d.e.l.e.t.e").

    A verb of four letters or more counts anywhere, not only between separators or camelCase
    humps: "delete_all", "bulk-remove", "bulkDelete", "CANCELled", "DELETEall", "softdeletes",
    "dropdown" and "swipe" are all destructive, and so are the verbs' inflected forms
    ("deleting", "deletion", "removal", "erasure", "revocation"); "create" and "update" are not. Erring this way
    costs a reviewer a look at a harmless call ("avoid", "undelete"); erring the other way lets
    a delete through, and any rule for where a word ends is one an agent can spell around.
    Separators are removed before looking, so they split no verb, and may join one across two
    words ("add_rop" holds "drop"): that errs toward asking too.

    "rm" and "del" count as a word part of their own, alone or beside others ("rm", "rm_rf",
    "bulkRm", "DEL", "delAll", "bulk-del", "del2"), also spelled across separators ("r-m",
    "d.e.l", "de_l"); not inside a longer word, where they are mostly something else
    ("confirm", "perform", "format", "model", "deliver", "delay"). So "rmdir" or "delall",
    written as one word, are not destructive by these two alone.

    An op that is not a string, or has characters outside ASCII letters, digits, ``.``,
    ``_``, ``-`` and whitespace (a Cyrillic "dеlete", a zero-width space), cannot be read
    as a verb, so it cannot be shown harmless and counts as destructive. The API refuses
    such ops with 400 before they get here.
    """
    if not isinstance(op, str):
        return op is not None
    if _READABLE_OP.fullmatch(op) is None:
        return True
    joined = _SEPARATORS.sub("", op).lower()
    if any(verb in joined for verb in _LONG_VERBS):
        return True
    if len(joined) < _SHORTEST_WORD:
        return False
    return _short_verb_among([part.lower() for part in _WORD_PARTS.findall(op)])


def is_missing_op(op: Any) -> bool:
    """True for a call that names no verb: no op, or one of separators and whitespace only.
    A mutating call without one parks (SPEC section 2): an omitted op is never harmless."""
    return op is None or (isinstance(op, str) and not _SEPARATORS.sub("", op))


def _declared(value: Any) -> bool:
    return value is not None and value != ""


def _says_mutating(metadata: Mapping[str, Any] | None) -> bool:
    if not metadata:
        return False
    try:
        flag = metadata.get("mutating")
    except AttributeError:  # not a mapping: it cannot say "mutating: true"
        return False
    return flag is True or (isinstance(flag, str) and flag.strip().lower() == "true")


def _resolve(
    call_metadata: Mapping[str, Any] | None, registered: ToolSpec | None, static: ToolSpec | None
) -> str | None:
    if registered is None and static is None:
        return None
    if registered is not None and _declared(registered.policy_class):
        declared = registered.policy_class
    elif static is not None and _declared(static.policy_class):
        declared = static.policy_class
    # Step 3 is the only place client metadata is read: it can promote a would-be read
    # to mutate and nothing else, so "mutating": false or a class name sent by the
    # client can never loosen a declared class.
    elif (
        _says_mutating(registered.metadata if registered is not None else None)
        or _says_mutating(static.metadata if static is not None else None)
        or _says_mutating(call_metadata)
    ):
        return _MUTATE
    else:
        return _READ
    if isinstance(declared, str):
        return _CLASSES.get(declared, declared)
    return repr(declared)  # garbage from data: an unrecognised class, fails closed


def resolve_policy_class(
    call: ToolCall, registered: ToolSpec | None, static: Mapping[str, ToolSpec] = STATIC_REGISTRY
) -> str | None:
    """The call's policy class by SPEC section 2's four steps; None if the tool is unknown.

    (1) the registered descriptor's explicit class; (2) the static registry's class;
    (3) ``mutating: true`` in either descriptor's metadata or the call's metadata ->
    "mutate"; (4) known to a registry but none of these -> "read". A tool known to
    neither registry resolves to None, whatever its metadata says.
    """
    return _resolve(call.metadata, registered, static.get(call.tool))


def effective_spec(
    tool_name: str, registered: ToolSpec | None, static: Mapping[str, ToolSpec] = STATIC_REGISTRY
) -> ToolSpec | None:
    """The descriptor the gate applies: the registered row laid over the static entry.

    Merge rule, field by field, the registered value wins when it is *set*:
    ``policy_class`` / ``hitl_tier`` when not None or ""; ``trust`` when it is not the
    default "trusted" (so a row can mark a tool untrusted but never clear a static
    "untrusted"); ``allowed_hosts`` when non-empty (it replaces the static list, it is
    not unioned); ``description`` when non-empty; ``approvals_required`` is the larger of the two;
    ``identity_args`` are the union of both. ``metadata`` is merged key by key,
    registered keys winning. With only one side present that side is returned as is;
    with neither, None.
    """
    static_spec = static.get(tool_name)
    if registered is None or static_spec is None:
        return registered if static_spec is None else static_spec
    r, s = registered, static_spec
    return ToolSpec(
        name=tool_name,
        policy_class=r.policy_class if _declared(r.policy_class) else s.policy_class,
        hitl_tier=r.hitl_tier if _declared(r.hitl_tier) else s.hitl_tier,
        trust=r.trust if _declared(r.trust) and r.trust != Trust.TRUSTED else s.trust,
        allowed_hosts=r.allowed_hosts or s.allowed_hosts,
        metadata={**s.metadata, **r.metadata} if r.metadata else s.metadata,
        description=r.description or s.description,
        # Like trust: a row can ask for more eyes than the static entry, never fewer.
        approvals_required=max(r.approvals_required, s.approvals_required),
        # Likewise a row can lock more arguments than the static entry, never fewer.
        identity_args=tuple(dict.fromkeys((*s.identity_args, *r.identity_args))),
    )


def _matrix(policy_class: str | None, tier: str | None, destructive: bool, missing_op: bool, ctx: Context) -> str:
    """SPEC section 2's decision matrix, rows 1-14 (and 11a, a low-tier write with no op), first
    match wins."""
    if policy_class is None:
        return "unregistered.fail-closed"  # 1
    if policy_class not in _CLASSES:
        return "unknown.fail-closed"  # 2
    if policy_class == _READ:
        return "read.allow"  # 3
    autonomous = ctx.autonomy == _AUTONOMOUS
    child = not (isinstance(ctx.age_band, str) and ctx.age_band in _NOT_CHILD)
    consent = ctx.consent is True
    if policy_class == _COMMS or policy_class == _EXEC:
        if policy_class == _COMMS and child:
            return "comms.child-blocked"  # 4
        if ctx.tainted is not False:
            return "taint.external-approval"  # 5
        if policy_class == _EXEC:
            return "exec.always-approval"  # 8 (rows 6-7 are comms only)
        if autonomous and consent:
            return "comms.autonomous-consented-allow"  # 6
        return "comms.approval"  # 7
    # mutate
    if tier is None:
        return "mutate.missing-tier-approval"  # 9
    if tier == "high":
        return "mutate.high-tier-always-approval"  # 10
    if missing_op:
        return "mutate.missing-op-approval"  # 11a: parks as a destructive one would
    if destructive:
        return "mutate.destructive-op-approval"  # 11
    if not autonomous:
        return "mutate.low-tier-supervised-approval"  # 12
    if child and not consent:
        return "mutate.low-tier-child-consent-approval"  # 13
    return "mutate.low-tier-autonomous-allow"  # 14


def evaluate(
    call: ToolCall,
    ctx: Context,
    registered: ToolSpec | None,
    static: Mapping[str, ToolSpec] = STATIC_REGISTRY,
) -> Verdict:
    """Decide one tool call: egress first, then the matrix.

    ``registered`` is the database descriptor for ``call.tool`` (None if there is no
    row); passing another tool's descriptor is a caller bug and raises ValueError. Odd
    values inside the inputs never raise: they fail closed. ``static`` is the built-in
    registry. Fields are taken as ``effective_spec``
    would merge them, without building the merged spec on this hot path.
    """
    if registered is not None and registered.name != call.tool:
        raise ValueError(f"descriptor {registered.name!r} passed for a call to {call.tool!r}")
    static_spec = static.get(call.tool)
    policy_class = _resolve(call.metadata, registered, static_spec)

    tier = None
    if registered is not None and _declared(registered.hitl_tier):
        tier = registered.hitl_tier
    elif static_spec is not None:
        tier = static_spec.hitl_tier
    tier = _TIERS.get(tier) if isinstance(tier, str) else None

    hosts = registered.allowed_hosts if registered is not None else ()
    if not hosts and static_spec is not None:
        hosts = static_spec.allowed_hosts

    missing_op = is_missing_op(call.op)
    # No verb is no proof of harmlessness: it is shown, tiered and decided as a destructive one.
    destructive = missing_op or is_destructive(call.op)
    rule_id = egress_rule(hosts, policy_class, call.args) or _matrix(policy_class, tier, destructive, missing_op, ctx)
    return make_verdict(rule_id, policy_class, effective_tier(policy_class, tier, destructive), destructive)
