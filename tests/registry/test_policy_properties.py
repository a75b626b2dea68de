"""Invariants of SPEC section 2, checked over generated calls, descriptors and contexts."""

import string
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from registry.policy import (
    RULE_IDS,
    RULES,
    STATIC_REGISTRY,
    Context,
    Decision,
    ToolCall,
    ToolSpec,
    evaluate,
    is_destructive,
)

ALLOWING_RULES = {"read.allow", "comms.autonomous-consented-allow", "mutate.low-tier-autonomous-allow"}
KNOWN_CLASSES = {"read", "mutate", "exec", "comms"}
DESTRUCTIVE = {
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
# "rm" and "del" count as word parts of their own only; every longer verb anywhere.
LONG_DESTRUCTIVE = {verb for verb in DESTRUCTIVE if len(verb) > 3}

tool_names = st.sampled_from(sorted(STATIC_REGISTRY) + ["probe_tool", "mystery_tool"])
hosts = st.sampled_from(
    [
        "smtp.clinic.example",
        "ehr.partner.example",
        "api.partner.example",
        "api.partner.example:8443",
        "bücher.example",
        "evil.net",
    ]
)
urls = st.one_of(
    hosts,
    hosts.map(lambda h: f"https://{h}/path"),
    st.sampled_from(
        [
            "https://api.partner.example@evil.net/",
            "https://evil.net\\@ehr.partner.example",
            "",
            "ehr.partner.example.",
            "HTTPS://EHR.PARTNER.EXAMPLE/",
        ]
    ),
    st.text(max_size=20),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10))
plain_keys = st.sampled_from(["patient_id", "to", "note", "dose", "items"]) | st.text(max_size=6)
url_keys = st.sampled_from(["url", "endpoint", "target_url", "host", "Host", "URL"])


def json_like(keys, leaves):
    return st.recursive(
        leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3), max_leaves=8
    )


# Half the calls carry no URL key at all, so the matrix behind the egress check is
# exercised as often as the egress check itself.
args = st.one_of(
    st.dictionaries(plain_keys, json_like(plain_keys, scalars), max_size=4),
    st.dictionaries(plain_keys | url_keys, json_like(plain_keys | url_keys, scalars | urls), max_size=4),
)
metadata_values = st.one_of(scalars, st.sampled_from(["auto", "never", "always", "true", "false"]))
client_metadata = st.dictionaries(
    st.sampled_from(["mutating", "plan", "approval_policy", "policy_class", "hitl_tier", "note"]),
    metadata_values,
    max_size=4,
)
ops = st.one_of(
    st.sampled_from(
        [
            "",
            "create",
            "update",
            "send",
            " Delete",
            "VOID",
            "remove ",
            "Cancel",
            "discontinue",
            "ARCHIVE",
            "delete_note",
            "bulkDelete",
            "bulk-remove",
            "d\u0435lete",
            "delete\u200b",
            "de-lete",
            "d.e.l.e.t.e",
            "purge",
            "rm",
            "del",
            "bulkRm",
            "-",
            "confirm",
        ]
    ),
    st.text(max_size=10),
)
# Unrecognised spellings are in the mix; they must fail closed like "guarded" / "child".
contexts = st.builds(
    Context,
    autonomy=st.sampled_from(["autonomous", "autonomous", "guarded", "ambient", "Autonomous", ""]),
    tainted=st.booleans(),
    consent=st.booleans(),
    age_band=st.sampled_from(["adult", "adult", "teen", "child", "unknown", "Adult", "elderly"]),
)


@st.composite
def calls(draw):
    """(call, registered descriptor or None) for one tool."""
    name = draw(tool_names)
    call = ToolCall(tool=name, op=draw(ops), args=draw(args), metadata=draw(client_metadata))
    registered = draw(
        st.none()
        | st.builds(
            ToolSpec,
            name=st.just(name),
            policy_class=st.sampled_from([None, "", "read", "mutate", "exec", "comms", "quantum"]),
            hitl_tier=st.sampled_from([None, "", "low", "high", "medium"]),
            trust=st.sampled_from(["trusted", "untrusted"]),
            allowed_hosts=st.lists(hosts, max_size=2).map(tuple),
            metadata=st.dictionaries(st.sampled_from(["mutating", "owner"]), metadata_values, max_size=2),
        )
    )
    return call, registered


def declared_tier(call, registered):
    """The descriptor's tier, read from the inputs rather than from the engine."""
    if registered is not None and registered.hitl_tier:
        return registered.hitl_tier
    static = STATIC_REGISTRY.get(call.tool)
    return static.hitl_tier if static is not None else None


@settings(max_examples=500)
@given(calls(), contexts)
def test_only_three_rules_ever_allow(call_and_spec, ctx):
    verdict = evaluate(call_and_spec[0], ctx, call_and_spec[1])
    assert (verdict.decision is Decision.ALLOW) == (verdict.rule_id in ALLOWING_RULES)


@settings(max_examples=500)
@given(calls(), contexts)
def test_every_rule_emitted_is_known_and_decides_as_its_table_says(call_and_spec, ctx):
    verdict = evaluate(call_and_spec[0], ctx, call_and_spec[1])
    assert verdict.rule_id in RULE_IDS
    assert verdict.decision is RULES[verdict.rule_id].decision
    assert verdict.explanation == RULES[verdict.rule_id].explanation


@given(calls(), contexts)
def test_tainted_session_never_gets_allow_for_comms_or_exec(call_and_spec, ctx):
    verdict = evaluate(call_and_spec[0], replace(ctx, tainted=True), call_and_spec[1])
    if verdict.policy_class in ("comms", "exec"):
        assert verdict.decision is not Decision.ALLOW


@settings(max_examples=500)
@given(calls(), contexts)
def test_high_missing_tier_or_destructive_mutations_always_need_approval(call_and_spec, ctx):
    call, registered = call_and_spec
    verdict = evaluate(call, ctx, registered)
    # Whole verbs and the SPEC's word-part examples; the properties below cover the rest.
    op = call.op.strip()
    destructive = (
        not op.strip("._-")
        or op.lower() in DESTRUCTIVE
        or any(
            op.lower().startswith(f"{verb}_") or op.lower().endswith(f"-{verb}") or op.endswith(verb.capitalize())
            for verb in DESTRUCTIVE
        )
        or not op.isascii()
    )
    if verdict.policy_class == "mutate" and (declared_tier(call, registered) != "low" or destructive):
        # Egress may block it outright first; it is never allowed.
        assert verdict.decision is Decision.REQUIRE_APPROVAL or verdict.rule_id.startswith("egress.")
        assert verdict.effective_tier == "high"


@given(calls(), contexts)
def test_unknown_tool_or_unknown_class_never_allows(call_and_spec, ctx):
    call, registered = call_and_spec
    verdict = evaluate(call, ctx, registered)
    if registered is None and call.tool not in STATIC_REGISTRY:
        assert verdict.rule_id in ("unregistered.fail-closed", "egress.host-not-allowed")
    if verdict.policy_class is None or verdict.policy_class not in KNOWN_CLASSES:
        assert verdict.decision is not Decision.ALLOW


@settings(max_examples=500)
@given(
    calls(),
    contexts,
    st.dictionaries(
        st.sampled_from(
            [
                "plan",
                "approval_policy",
                "approvalPolicy",
                "policy_class",
                "hitl_tier",
                "autonomy",
                "consent",
                "tainted",
                "note",
            ]
        )
        | st.text(max_size=8),
        metadata_values,
        max_size=4,
    ),
)
def test_client_plan_and_approval_policy_never_change_the_verdict(call_and_spec, ctx, extra):
    call, registered = call_and_spec
    extra.pop("mutating", None)  # the one key the SPEC lets a client use (step 3)
    loaded = replace(call, metadata={**call.metadata, **extra})
    assert evaluate(loaded, ctx, registered) == evaluate(call, ctx, registered)


@given(calls(), contexts)
def test_client_mutating_flag_can_only_tighten(call_and_spec, ctx):
    call, registered = call_and_spec
    plain = replace(call, metadata={k: v for k, v in call.metadata.items() if k != "mutating"})
    flagged = replace(plain, metadata={**plain.metadata, "mutating": True})
    denied = replace(plain, metadata={**plain.metadata, "mutating": False})
    assert evaluate(denied, ctx, registered) == evaluate(plain, ctx, registered)
    if evaluate(flagged, ctx, registered).decision is Decision.ALLOW:
        assert evaluate(plain, ctx, registered).decision is Decision.ALLOW


@given(calls(), contexts)
def test_taint_and_withdrawn_consent_never_loosen(call_and_spec, ctx):
    call, registered = call_and_spec
    loosest = evaluate(call, replace(ctx, tainted=False, consent=True), registered)
    for tainted, consent in ((True, True), (False, False), (True, False)):
        tighter = evaluate(call, replace(ctx, tainted=tainted, consent=consent), registered)
        if tighter.decision is Decision.ALLOW:
            assert loosest.decision is Decision.ALLOW


@given(calls(), contexts)
def test_comms_is_never_allowed_for_a_child_or_unknown_age(call_and_spec, ctx):
    call, registered = call_and_spec
    for band in ("child", "unknown", "toddler"):
        verdict = evaluate(call, replace(ctx, age_band=band), registered)
        if verdict.policy_class == "comms":
            assert verdict.decision is Decision.BLOCKED


# --- Destructive verbs as word parts (SPEC section 2) -----------------------------------------

words = st.from_regex(r"[a-z][a-z0-9]{0,7}", fullmatch=True).filter(lambda w: not is_destructive(w))
verbs = st.sampled_from(sorted(DESTRUCTIVE))
long_verbs = st.sampled_from(sorted(LONG_DESTRUCTIVE))
LOW_MUTATE = ToolSpec("probe_tool", policy_class="mutate", hitl_tier="low")
TYPED = Context(autonomy="autonomous", tainted=False, consent=True, age_band="adult")


@given(
    st.lists(words, max_size=3),
    verbs,
    st.lists(words, max_size=3),
    st.sampled_from("_-."),
    st.sampled_from([str.lower, str.upper, str.capitalize]),
)
def test_a_destructive_verb_between_separators_is_destructive(before, verb, after, sep, case):
    op = sep.join([*before, case(verb), *after])
    verdict = evaluate(ToolCall("probe_tool", op=op), TYPED, LOW_MUTATE, static={})
    assert verdict.rule_id == "mutate.destructive-op-approval", op


@given(st.lists(words, max_size=3), verbs, st.lists(words, max_size=3))
def test_a_destructive_verb_as_a_camel_case_hump_is_destructive(before, verb, after):
    head, *rest = [*before, verb, *after]
    op = head + "".join(word.capitalize() for word in rest)
    assert is_destructive(op), op


@given(
    st.text(alphabet=string.ascii_letters + string.digits, max_size=6),
    long_verbs,
    st.text(alphabet=string.ascii_letters + string.digits, max_size=6),
    st.data(),
)
def test_a_destructive_verb_inside_a_word_in_any_case_is_destructive(before, verb, after, data):
    # "CANCELled", "DELETEall", "softdeletes": no rule for where a word ends to spell around.
    cased = "".join(data.draw(st.sampled_from([ch.lower(), ch.upper()])) for ch in verb)
    op = before + cased + after
    assert is_destructive(op), op
    verdict = evaluate(ToolCall("probe_tool", op=op), TYPED, LOW_MUTATE, static={})
    assert verdict.rule_id == "mutate.destructive-op-approval", op


@given(st.lists(words, min_size=1, max_size=4), st.sampled_from(["_", "-", "."]))
def test_separators_make_no_verb_harmless(parts, sep):
    # Separators are removed before looking: a word joined with them reads as the word without.
    assert is_destructive(sep.join(parts)) == is_destructive("".join(parts).lower()) or any(
        len(part) <= 3 for part in parts
    )  # a short part may spell "rm" or "del" beside its neighbour


@given(verbs, st.data(), st.sampled_from([str.lower, str.upper, str.capitalize]))
def test_a_destructive_verb_split_by_separators_inside_it_is_destructive(verb, data, case):
    # "de-lete", "d.e.l.e.t.e", "r_m": every gap between two letters may hold separators.
    letters = case(verb)
    gaps = data.draw(
        st.lists(st.sampled_from(["", "-", "_", ".", " "]), min_size=len(letters) - 1, max_size=len(letters) - 1)
    )
    op = letters[0] + "".join(gap + letter for gap, letter in zip(gaps, letters[1:], strict=True))
    assert is_destructive(op), op
    verdict = evaluate(ToolCall("probe_tool", op=op), TYPED, LOW_MUTATE, static={})
    assert verdict.rule_id == "mutate.destructive-op-approval", op


@given(
    st.sampled_from(["", " ", "-", "._", None]),
    st.dictionaries(st.sampled_from(["action", "note", "id"]), st.sampled_from(["delete", "create", "x"])),
)
def test_a_low_tier_write_with_no_op_parks_whatever_its_args_say(op, args):
    verdict = evaluate(ToolCall("probe_tool", op=op, args=args), TYPED, LOW_MUTATE, static={})
    assert (verdict.decision, verdict.rule_id) == (Decision.REQUIRE_APPROVAL, "mutate.missing-op-approval")
    assert (verdict.effective_tier, verdict.destructive) == ("high", True)


@given(st.text(min_size=1, max_size=12).filter(lambda t: not t.isascii()))
def test_an_op_with_any_non_ascii_character_counts_as_destructive(op):
    # The API refuses these with 400; a pure caller (the simulator) still fails closed.
    assert is_destructive(op)
    verdict = evaluate(ToolCall("probe_tool", op=op), TYPED, LOW_MUTATE, static={})
    assert verdict.decision is Decision.REQUIRE_APPROVAL
