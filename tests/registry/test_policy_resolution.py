"""Policy class resolution (SPEC section 2, four steps) and the effective descriptor merge."""

import pytest

from registry.policy import (
    STATIC_REGISTRY,
    Context,
    PolicyClass,
    Tier,
    ToolCall,
    ToolSpec,
    Trust,
    effective_spec,
    evaluate,
    resolve_policy_class,
)

TYPED_ADULT = Context(autonomy="autonomous", tainted=False, consent=True, age_band="adult")

# A static registry of our own, so each step can be exercised in isolation.
STATIC = {
    "static_read": ToolSpec("static_read", policy_class="read"),
    "static_high": ToolSpec("static_high", policy_class="mutate", hitl_tier="high"),
    "static_unclassed_mutating": ToolSpec("static_unclassed_mutating", metadata={"mutating": True}),
    "static_unclassed": ToolSpec("static_unclassed"),
}


def resolve(tool, registered=None, call_metadata=None, static=STATIC):
    return resolve_policy_class(ToolCall(tool, metadata=call_metadata or {}), registered, static)


# Step 1: the registered descriptor's explicit class.


def test_registered_explicit_class_beats_the_static_registry():
    assert resolve("static_high", ToolSpec("static_high", policy_class="read")) == "read"
    assert resolve("static_read", ToolSpec("static_read", policy_class="exec")) == "exec"


def test_registered_explicit_class_beats_mutating_metadata():
    registered = ToolSpec("tool_x", policy_class="read", metadata={"mutating": True})
    assert resolve("tool_x", registered, call_metadata={"mutating": True}) == "read"


def test_registered_unrecognised_class_is_kept_so_it_fails_closed():
    assert resolve("static_read", ToolSpec("static_read", policy_class="teleport")) == "teleport"
    verdict = evaluate(ToolCall("static_read"), TYPED_ADULT, ToolSpec("static_read", policy_class="teleport"), STATIC)
    assert verdict.rule_id == "unknown.fail-closed"


def test_enum_members_resolve_to_plain_strings():
    resolved = resolve("tool_x", ToolSpec("tool_x", policy_class=PolicyClass.MUTATE))
    assert resolved == "mutate" and type(resolved) is str


# Step 2: the static registry.


def test_static_class_applies_when_registered_declares_none():
    assert resolve("static_high", ToolSpec("static_high")) == "mutate"
    assert resolve("static_high") == "mutate"


@pytest.mark.parametrize("blank", [None, ""], ids=["none", "empty-string"])
def test_a_blank_registered_class_counts_as_undeclared(blank):
    assert resolve("static_high", ToolSpec("static_high", policy_class=blank)) == "mutate"


def test_static_class_beats_client_metadata():
    # A statically declared read stays read: metadata is only consulted at step 3.
    assert resolve("static_read", call_metadata={"mutating": True}) == "read"


# Step 3: mutating: true in descriptor or call metadata.


def test_registered_descriptor_metadata_mutating_promotes_to_mutate():
    assert resolve("tool_x", ToolSpec("tool_x", metadata={"mutating": True})) == "mutate"


def test_static_descriptor_metadata_mutating_promotes_to_mutate():
    assert resolve("static_unclassed_mutating") == "mutate"


def test_call_metadata_mutating_promotes_a_would_be_read():
    assert resolve("tool_x", ToolSpec("tool_x"), call_metadata={"mutating": True}) == "mutate"
    assert resolve("tool_x", ToolSpec("tool_x"), call_metadata={"mutating": "True"}) == "mutate"


@pytest.mark.parametrize("flag", [False, "false", None, 0, "no", [], {"x": 1}])
def test_anything_but_true_does_not_promote(flag):
    assert resolve("tool_x", ToolSpec("tool_x"), call_metadata={"mutating": flag}) == "read"


def test_promoted_mutation_without_a_tier_is_treated_as_high():
    verdict = evaluate(
        ToolCall("tool_x", op="create", metadata={"mutating": True}), TYPED_ADULT, ToolSpec("tool_x"), STATIC
    )
    assert (verdict.policy_class, verdict.rule_id) == ("mutate", "mutate.missing-tier-approval")
    assert verdict.effective_tier == "high"


def test_metadata_can_never_demote_a_mutation():
    registered = ToolSpec("tool_x", policy_class="mutate", hitl_tier="high")
    assert resolve("tool_x", registered, call_metadata={"mutating": False}) == "mutate"
    assert resolve("static_high", call_metadata={"mutating": False}) == "mutate"
    # The descriptor says mutating; the client saying otherwise changes nothing.
    assert (
        resolve("tool_x", ToolSpec("tool_x", metadata={"mutating": True}), call_metadata={"mutating": False})
        == "mutate"
    )


def test_client_cannot_declare_its_own_policy_class():
    metadata = {"policy_class": "read", "policyClass": "read", "hitl_tier": "low"}
    assert resolve("static_high", call_metadata=metadata) == "mutate"
    verdict = evaluate(ToolCall("prescribe_medication", metadata=metadata), TYPED_ADULT, None)
    assert verdict.rule_id == "mutate.high-tier-always-approval"


# Step 4: registered with none of these.


def test_registered_without_class_or_flag_is_read():
    assert resolve("tool_x", ToolSpec("tool_x")) == "read"


def test_known_only_to_the_static_registry_without_class_is_read():
    assert resolve("static_unclassed") == "read"


# Unknown to both registries.


def test_unknown_to_both_registries_resolves_to_none():
    assert resolve("tool_x") is None
    assert resolve("tool_x", call_metadata={"mutating": True}) is None
    verdict = evaluate(ToolCall("tool_x", metadata={"mutating": True}), TYPED_ADULT, None, STATIC)
    assert (verdict.policy_class, verdict.rule_id) == (None, "unregistered.fail-closed")


def test_the_default_static_registry_is_the_built_in_catalog():
    assert resolve_policy_class(ToolCall("prescribe_medication"), None) == "mutate"
    assert resolve_policy_class(ToolCall("search_patients"), None) == "read"
    assert resolve_policy_class(ToolCall("not_a_tool"), None) is None


def test_a_descriptor_for_another_tool_is_a_caller_bug():
    with pytest.raises(ValueError):
        evaluate(ToolCall("record_vitals"), TYPED_ADULT, ToolSpec("prescribe_medication"))


# effective_spec: the registered row laid over the static entry, field by field.


def test_effective_spec_with_one_side_returns_that_side():
    registered = ToolSpec("tool_x", policy_class="read")
    assert effective_spec("tool_x", registered, STATIC) is registered
    assert effective_spec("static_high", None, STATIC) is STATIC["static_high"]
    assert effective_spec("tool_x", None, STATIC) is None


def test_effective_spec_registered_fields_win_when_set():
    static = {
        "sync": ToolSpec(
            "sync", "comms", "low", Trust.TRUSTED, ("a.example",), {"owner": "ehr", "v": 1}, "static words"
        )
    }
    registered = ToolSpec("sync", "mutate", "high", Trust.UNTRUSTED, ("b.example",), {"v": 2}, "registered words")
    merged = effective_spec("sync", registered, static)
    assert merged == ToolSpec(
        "sync", "mutate", "high", "untrusted", ("b.example",), {"owner": "ehr", "v": 2}, "registered words"
    )


def test_effective_spec_unset_registered_fields_fall_back_to_static():
    static = {
        "sync": ToolSpec("sync", "comms", "low", Trust.UNTRUSTED, ("a.example",), {"owner": "ehr"}, "static words")
    }
    merged = effective_spec("sync", ToolSpec("sync", policy_class="", hitl_tier=None), static)
    assert merged == static["sync"]


def test_registered_trusted_cannot_clear_a_static_untrusted():
    merged = effective_spec("web_search", ToolSpec("web_search", trust="trusted"))
    assert merged.trust == "untrusted"


def test_effective_spec_registered_tier_over_static_class():
    merged = effective_spec("record_vitals", ToolSpec("record_vitals", hitl_tier=Tier.HIGH))
    assert (merged.policy_class, merged.hitl_tier) == ("mutate", "high")
    assert merged.allowed_hosts == () and merged.description == STATIC_REGISTRY["record_vitals"].description


def test_evaluate_applies_the_same_merge():
    # The registered row raises the tier; the static entry still supplies the class.
    verdict = evaluate(ToolCall("record_vitals", op="create"), TYPED_ADULT, ToolSpec("record_vitals", hitl_tier="high"))
    assert verdict.rule_id == "mutate.high-tier-always-approval"
    # The registered row declares no hosts; the static allow-list still applies.
    sync = ToolCall("sync_ehr", args={"endpoint": "https://ehr.partner.example/fhir"})
    assert evaluate(sync, TYPED_ADULT, ToolSpec("sync_ehr")).rule_id == ("comms.autonomous-consented-allow")
    # Registered hosts replace the static list rather than extend it.
    moved = ToolSpec("sync_ehr", allowed_hosts=("ehr2.partner.example",))
    assert evaluate(sync, TYPED_ADULT, moved).rule_id == "egress.host-not-allowed"


def test_allowed_hosts_from_a_list_are_stored_as_a_tuple():
    assert ToolSpec("t", allowed_hosts=["a.example"]).allowed_hosts == ("a.example",)
