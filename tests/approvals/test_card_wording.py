"""A card says why it needs a clinician in a clinician's words: the sentence of every rule that
parks a call (registry/policy/types.py) names what happens to the patient's record, not how
Condor is built (its registry, tiers, tools, operations or sessions)."""

import re

import pytest

from approvals.gate import CLARIFICATION_RULE, EXPLANATIONS
from registry.policy import RULES, Decision

ENGINEERING_WORDS = re.compile(
    r"\b(tools?|registry|tiers?|writes?|operations?|sessions?|untrusted|class|op)\b", re.IGNORECASE
)
PARKING = {rule_id: rule.explanation for rule_id, rule in RULES.items() if rule.decision is Decision.REQUIRE_APPROVAL}


@pytest.mark.parametrize("rule_id", [*PARKING, CLARIFICATION_RULE])
def test_a_parking_rules_sentence_reads_for_a_clinician(rule_id):
    sentence = PARKING.get(rule_id) or EXPLANATIONS[rule_id]
    assert not ENGINEERING_WORDS.search(sentence), sentence
    assert len(sentence) <= 200, sentence  # one sentence a reviewer reads at a glance
