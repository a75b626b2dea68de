"""The decision matrix of SPEC section 2, checked for every combination of its axes.

``expected()`` below is written from the SPEC table alone, row by row, and does not
import anything from the engine, so the two can only agree if both follow the table.
"""

import itertools
import string

import pytest

from registry.policy import RULE_IDS, Context, Decision, ToolCall, ToolSpec, evaluate

UNREGISTERED = object()  # a tool unknown to both registries
CLASSES = ["read", "mutate", "exec", "comms", UNREGISTERED, "quantum"]  # quantum: unrecognised
TIERS = ["low", "high", None]
VERBS = [
    "create",
    "Delete",
    "VOID",
    "ReMove",
    "  cancel ",
    "Discontinue",
    "arChive",
    "delete_all",
    "bulk-remove",
    "remove.item",
    "bulkDelete",
    "update_note",
    "CANCELled",
    "softdeletes",
    "d\u0435lete",
    "delete\u200b",  # a Cyrillic е, a zero-width space
    "purge",
    "Erase",
    "DESTROY",
    "drop",
    "wipe",
    "truncate",
    "expunge",
    "revoke",
    "rm",
    "DEL",
    "de-lete",
    "de_lete",
    "d.e.l.e.t.e",
    "r-m",
    "bulkRm",
    "del_all",
    "confirm",
    "model",
    "Deletion",
    "record_removal",
    "bulkErasing",
    "revocation",
    "",
    "  ",
    "-",
]  # the last three name no verb
AUTONOMIES = ["autonomous", "guarded", "ambient", "full-auto"]  # full-auto: unrecognised
TAINTS = [False, True]
CONSENTS = [False, True]
AGE_BANDS = ["adult", "teen", "child", "unknown", "elderly"]  # elderly: unrecognised

ALLOW, BLOCKED, APPROVAL = "allow", "blocked", "require_approval"

DESTRUCTIVE_VERBS = (
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
)
# "rm" and "del" count as a word part of their own (the engine's docstring says why); written out here
# for the VERBS above and the examples below rather than computed.
# The verbs' inflected forms whose letters change (the final "e" goes), written out.
INFLECTED_FORMS = (
    "deleting",
    "deletion",
    "removal",
    "removing",
    "erasing",
    "erasure",
    "purging",
    "archiving",
    "archival",
    "revoking",
    "revocation",
    "truncating",
    "truncation",
    "expunging",
    "discontinuing",
    "discontinuation",
    "wiping",
    "destruction",
)
SHORT_VERB_OPS = {"rm", "DEL", "r-m", "bulkRm", "del_all", "de_l", "rm_rf", "DELAll", "d.e.l"}
SEPARATORS = "_-. \t\n"


def destructive(verb):
    """SPEC section 2, by hand: a destructive verb anywhere in the op once separators are removed,
    whatever its case (a word part need not sit between separators). Anything beyond ASCII letters,
    digits and separators cannot be read, so it fails closed."""
    if any(ch not in string.ascii_letters + string.digits + SEPARATORS for ch in verb):
        return True
    joined = "".join(ch for ch in verb if ch not in SEPARATORS).lower()
    return any(v in joined for v in DESTRUCTIVE_VERBS + INFLECTED_FORMS) or verb in SHORT_VERB_OPS


def missing(verb):
    """No op at all: nothing but separators."""
    return all(ch in SEPARATORS for ch in verb)


def expected(cls, tier, verb, autonomy, tainted, consent, age_band):
    """SPEC section 2's table, transcribed literally; first true row wins."""
    child = age_band not in ("adult", "teen")  # unknown and unrecognised bands are child
    autonomous = autonomy == "autonomous"  # anything else is supervised
    is_destructive = destructive(verb)
    no_op = missing(verb)
    known = cls is not UNREGISTERED
    mutate_low = cls == "mutate" and tier == "low"
    rows = [
        (not known, APPROVAL, "unregistered.fail-closed"),
        (cls not in ("read", "mutate", "exec", "comms"), APPROVAL, "unknown.fail-closed"),
        (cls == "read", ALLOW, "read.allow"),
        (cls == "comms" and child, BLOCKED, "comms.child-blocked"),
        (cls in ("comms", "exec") and tainted, APPROVAL, "taint.external-approval"),
        (cls == "comms" and autonomous and consent, ALLOW, "comms.autonomous-consented-allow"),
        (cls == "comms", APPROVAL, "comms.approval"),
        (cls == "exec", APPROVAL, "exec.always-approval"),
        (cls == "mutate" and tier is None, APPROVAL, "mutate.missing-tier-approval"),
        (cls == "mutate" and tier == "high", APPROVAL, "mutate.high-tier-always-approval"),
        (mutate_low and no_op, APPROVAL, "mutate.missing-op-approval"),
        (mutate_low and is_destructive, APPROVAL, "mutate.destructive-op-approval"),
        (mutate_low and not autonomous, APPROVAL, "mutate.low-tier-supervised-approval"),
        (mutate_low and autonomous and child and not consent, APPROVAL, "mutate.low-tier-child-consent-approval"),
        (mutate_low and autonomous, ALLOW, "mutate.low-tier-autonomous-allow"),
    ]
    for condition, decision, rule_id in rows:
        if condition:
            return decision, rule_id
    raise AssertionError("the SPEC table has no row for this combination")


def expected_tier(cls, tier, verb):
    if cls == "read":
        return None
    if cls == "mutate" and tier == "low" and not destructive(verb) and not missing(verb):
        return "low"
    return "high"


def gate(cls, tier, verb, autonomy, tainted, consent, age_band):
    # An empty static registry, so the registered descriptor alone sets class and tier.
    # The comms descriptor declares a host so the egress check lets it reach the matrix.
    call = ToolCall(tool="probe_tool", op=verb)
    ctx = Context(autonomy=autonomy, tainted=tainted, consent=consent, age_band=age_band)
    if cls is UNREGISTERED:
        return evaluate(call, ctx, None, static={})
    spec = ToolSpec("probe_tool", policy_class=cls, hitl_tier=tier, allowed_hosts=("hooks.clinic.example",))
    return evaluate(call, ctx, spec, static={})


def class_id(cls):
    return "unregistered" if cls is UNREGISTERED else cls


@pytest.mark.parametrize("tier", TIERS, ids=lambda t: f"tier-{t or 'missing'}")
@pytest.mark.parametrize("cls", CLASSES, ids=class_id)
def test_every_combination_matches_the_spec_table(cls, tier):
    mismatches = []
    for verb, autonomy, tainted, consent, age_band in itertools.product(VERBS, AUTONOMIES, TAINTS, CONSENTS, AGE_BANDS):
        axes = (cls, tier, verb, autonomy, tainted, consent, age_band)
        verdict = gate(*axes)
        want = expected(*axes)
        got = (verdict.decision, verdict.rule_id)
        if got != want or verdict.effective_tier != expected_tier(cls, tier, verb):
            mismatches.append(f"{axes[2:]}: got {got} tier {verdict.effective_tier}, want {want}")
    assert not mismatches, f"{len(mismatches)} mismatches, first: " + "\n".join(mismatches[:10])


def test_the_exhaustive_table_reaches_every_row():
    hit = {
        gate(*axes).rule_id
        for axes in itertools.product(CLASSES, TIERS, VERBS, AUTONOMIES, TAINTS, CONSENTS, AGE_BANDS)
    }
    matrix_rules = {rule for rule in RULE_IDS if not rule.startswith("egress.")}
    assert hit == matrix_rules
    assert len(hit) == 15  # rows 1-14 and 11a


def test_rule_ids_are_the_spec_names_verbatim():
    assert set(RULE_IDS) == {
        "egress.host-not-allowed",
        "egress.no-declared-flows",
        "unregistered.fail-closed",
        "unknown.fail-closed",
        "read.allow",
        "comms.child-blocked",
        "taint.external-approval",
        "comms.autonomous-consented-allow",
        "comms.approval",
        "exec.always-approval",
        "mutate.missing-tier-approval",
        "mutate.high-tier-always-approval",
        "mutate.missing-op-approval",
        "mutate.destructive-op-approval",
        "mutate.low-tier-supervised-approval",
        "mutate.low-tier-child-consent-approval",
        "mutate.low-tier-autonomous-allow",
    }
    assert len(RULE_IDS) == len(set(RULE_IDS))


ADULT_TYPED = Context(autonomy="autonomous", tainted=False, consent=True, age_band="adult")
ADULT_GUARDED = Context(autonomy="guarded", tainted=False, consent=True, age_band="adult")
ADULT_AMBIENT_TAINTED = Context(autonomy="ambient", tainted=True, consent=True, age_band="adult")
CHILD_TYPED_NO_CONSENT = Context(autonomy="autonomous", tainted=False, consent=False, age_band="child")
UNKNOWN_AGE_TYPED = Context(autonomy="autonomous", tainted=False, consent=True, age_band="unknown")
TEEN_TYPED_NO_CONSENT = Context(autonomy="autonomous", tainted=False, consent=False, age_band="teen")
TAINTED_TYPED = Context(autonomy="autonomous", tainted=True, consent=True, age_band="adult")

EMAIL_ARGS = {"host": "smtp.clinic.example", "to": "patient@example.org"}

SPOT_ROWS = [
    pytest.param(
        "prescribe_medication",
        "create",
        {},
        ADULT_TYPED,
        APPROVAL,
        "mutate.high-tier-always-approval",
        id="prescription-always-approval",
    ),
    pytest.param(
        "change_medication",
        "Discontinue",
        {},
        ADULT_TYPED,
        APPROVAL,
        "mutate.high-tier-always-approval",
        id="discontinue-high-tier-wins",
    ),
    pytest.param(
        "record_vitals",
        "create",
        {},
        ADULT_TYPED,
        ALLOW,
        "mutate.low-tier-autonomous-allow",
        id="vitals-typed-by-clinician-allowed",
    ),
    pytest.param(
        "record_vitals",
        "create",
        {},
        ADULT_GUARDED,
        APPROVAL,
        "mutate.low-tier-supervised-approval",
        id="vitals-guarded-approval",
    ),
    pytest.param(
        "record_allergy",
        " DELETE ",
        {},
        ADULT_TYPED,
        APPROVAL,
        "mutate.destructive-op-approval",
        id="delete-allergy-destructive",
    ),
    pytest.param(
        "write_clinical_note",
        "delete_note",
        {},
        ADULT_TYPED,
        APPROVAL,
        "mutate.destructive-op-approval",
        id="word-part-delete-note",
    ),
    pytest.param(
        "write_clinical_note",
        "update_note",
        {},
        ADULT_TYPED,
        ALLOW,
        "mutate.low-tier-autonomous-allow",
        id="update-note-not-destructive",
    ),
    pytest.param(
        "write_clinical_note",
        "create",
        {},
        CHILD_TYPED_NO_CONSENT,
        APPROVAL,
        "mutate.low-tier-child-consent-approval",
        id="child-note-no-consent",
    ),
    pytest.param(
        "write_clinical_note",
        "create",
        {},
        TEEN_TYPED_NO_CONSENT,
        ALLOW,
        "mutate.low-tier-autonomous-allow",
        id="teen-note-no-consent-allowed",
    ),
    pytest.param(
        "write_clinical_note",
        "create",
        {},
        UNKNOWN_AGE_TYPED,
        ALLOW,
        "mutate.low-tier-autonomous-allow",
        id="unknown-age-with-consent",
    ),
    pytest.param(
        "send_email",
        "send",
        EMAIL_ARGS,
        ADULT_TYPED,
        ALLOW,
        "comms.autonomous-consented-allow",
        id="email-typed-consented",
    ),
    pytest.param(
        "send_email",
        "send",
        EMAIL_ARGS,
        UNKNOWN_AGE_TYPED,
        BLOCKED,
        "comms.child-blocked",
        id="email-unknown-age-blocked",
    ),
    pytest.param(
        "send_email",
        "send",
        EMAIL_ARGS,
        TAINTED_TYPED,
        APPROVAL,
        "taint.external-approval",
        id="email-tainted-approval",
    ),
    pytest.param(
        "send_email", "send", EMAIL_ARGS, ADULT_GUARDED, APPROVAL, "comms.approval", id="email-guarded-approval"
    ),
    pytest.param("run_script", "run", {}, ADULT_TYPED, APPROVAL, "exec.always-approval", id="script-always-approval"),
    pytest.param(
        "run_script", "run", {}, ADULT_AMBIENT_TAINTED, APPROVAL, "taint.external-approval", id="script-tainted"
    ),
    pytest.param(
        "web_search",
        "",
        {"query": "warfarin"},
        ADULT_AMBIENT_TAINTED,
        ALLOW,
        "read.allow",
        id="tainted-read-still-allowed",
    ),
    pytest.param(
        "get_patient_summary", "delete", {}, CHILD_TYPED_NO_CONSENT, ALLOW, "read.allow", id="read-ignores-verb-and-age"
    ),
    pytest.param("order_mri", "create", {}, ADULT_TYPED, APPROVAL, "unregistered.fail-closed", id="unregistered-tool"),
]


@pytest.mark.parametrize("tool, op, args, ctx, decision, rule_id", SPOT_ROWS)
def test_spot_rows_against_the_static_catalog(tool, op, args, ctx, decision, rule_id):
    verdict = evaluate(ToolCall(tool=tool, op=op, args=args), ctx, None)
    assert (verdict.decision, verdict.rule_id) == (decision, rule_id)


def test_verdict_carries_resolved_class_tier_and_verb():
    verdict = evaluate(ToolCall("record_allergy", op="Archive"), ADULT_TYPED, None)
    assert verdict.decision is Decision.REQUIRE_APPROVAL
    assert verdict.policy_class == "mutate"
    assert verdict.effective_tier == "high"  # a destructive low-tier write shows as high
    assert verdict.destructive is True


def test_every_verdict_explains_itself_in_one_sentence():
    verdicts = [
        gate(*axes) for axes in itertools.product(CLASSES, TIERS, VERBS[:2], AUTONOMIES, TAINTS, CONSENTS, AGE_BANDS)
    ]
    for verdict in verdicts:
        text = verdict.explanation
        assert text[0].isupper() and text.endswith(".") and text.count(". ") == 0, text
        assert "_" not in text and verdict.rule_id not in text, text


@pytest.mark.parametrize(
    "ctx, rule_id",
    [
        pytest.param(
            Context(None, False, True, "adult"), "mutate.low-tier-supervised-approval", id="autonomy-none-is-supervised"
        ),
        pytest.param(
            Context("autonomous", False, True, None),
            "mutate.low-tier-autonomous-allow",
            id="age-none-is-child-consent-granted",
        ),
        pytest.param(
            Context("autonomous", False, "yes", ["adult"]),
            "mutate.low-tier-child-consent-approval",
            id="consent-must-be-true",
        ),
    ],
)
def test_odd_context_values_fail_closed_without_raising(ctx, rule_id):
    assert evaluate(ToolCall("record_vitals", "create"), ctx, None).rule_id == rule_id


def test_odd_tainted_value_counts_as_tainted():
    ctx = Context(autonomy="autonomous", tainted=None, consent=True, age_band="adult")
    assert evaluate(ToolCall("run_script"), ctx, None).rule_id == "taint.external-approval"


def test_odd_descriptor_and_call_values_fail_closed_without_raising():
    odd = ToolSpec("probe_tool", policy_class=7, hitl_tier=["low"], allowed_hosts=({"host": "x"}, "ok.example"))
    call = ToolCall("probe_tool", op=None, args={"url": "https://ok.example/"}, metadata=[1])
    assert evaluate(call, ADULT_TYPED, odd, static={}).rule_id == "unknown.fail-closed"
    mutate = ToolSpec("probe_tool", policy_class="mutate", hitl_tier=["low"])
    assert evaluate(ToolCall("probe_tool", op=3), ADULT_TYPED, mutate, static={}).rule_id == (
        "mutate.missing-tier-approval"
    )
    low = ToolSpec("probe_tool", policy_class="mutate", hitl_tier="low")
    verdict = evaluate(ToolCall("probe_tool", op=3), ADULT_TYPED, low, static={})
    assert (verdict.rule_id, verdict.destructive) == ("mutate.destructive-op-approval", True)


@pytest.mark.parametrize(
    "verb, want",
    [
        ("delete_all", True),
        ("bulk-remove", True),
        ("remove.item", True),
        ("bulkDelete", True),
        ("XMLRemove", True),
        ("cancelOrder", True),
        ("Cancelled", True),
        ("bulkdelete", True),
        ("CANCELled", True),
        ("DELETEall", True),
        ("softdeletes", True),
        ("bulkdeleteall", True),
        ("de-lete", True),
        ("de_lete", True),
        ("d.e.l.e.t.e", True),
        ("PURGE", True),
        ("wipeAll", True),
        ("dropdown", True),
        ("rm", True),
        ("r-m", True),
        ("de_l", True),
        ("rm_rf", True),
        ("DELAll", True),
        *((form, True) for form in INFLECTED_FORMS),
        ("bulk_deletion", True),
        ("consentRevocation", True),
        ("create", False),
        ("update_note", False),
        ("sendLetter", False),
        ("", False),
        ("cameras", False),
        ("wipro_sync", False),
        ("purgatory", False),
        ("confirm", False),
        ("perform", False),
        ("model", False),
        ("deliver", False),
        ("rmdir", False),
    ],
)
def test_the_hand_written_rule_agrees_with_the_examples(verb, want):
    # The independent expected() above is only worth something if it reads the SPEC's examples right.
    assert destructive(verb) is want
