"""`make run`'s demo data reads as one ward's day: seed_demo's cards and the demo agent's scenarios together.

A patient lies in one bed and a bed holds one patient, wherever a title names it; and no
open question about an allergy sits beside an order for a drug that allergy would forbid.
The demo agent's scenarios are played against a run that only records what they ask.
"""

import asyncio
import io
import re
from dataclasses import dataclass, field

import pytest
from django.core.management import call_command

from approvals import cards
from approvals.card_context import RATIONALE_MAX_CHARS
from approvals.models import Approval, ApprovalStatus
from demo import agent as demo_agent
from demo.management.commands import seed_demo
from sessions_app.models import Session

BED = re.compile(r"(Ward \d+), bed (\d+)")
# Each allergy a demo question asks about, and the drugs it forbids (its own class and the ones
# that cross-react). A question about a substance missing here fails the test: add it first.
FORBIDS = {
    "penicillin": {
        "penicillin",
        "amoxicillin",
        "co-amoxiclav",
        "ampicillin",
        "flucloxacillin",
        "phenoxymethylpenicillin",
        "benzylpenicillin",
        "piperacillin",
    },
    "codeine": {"codeine", "co-codamol", "dihydrocodeine"},
}


@dataclass
class Story:
    """What the demo tells: sessions (title, patient, care unit), orders and open questions per patient."""

    sessions: list[tuple[str, str, str]] = field(default_factory=list)
    orders: list[tuple[str, str]] = field(default_factory=list)  # (patient, drug)
    questions: list[tuple[str, str]] = field(default_factory=list)  # (patient, substance)
    said: list[tuple[str, str | None]] = field(default_factory=list)  # ("assistant", text) / ("gate", rationale)


class Allowed(dict):
    tool_call_id, rule_id = "call", "recorded"


class RecordingRun:
    """Stands in for the client's run: every call is allowed, every question answered."""

    def __init__(self, story: Story):
        self.story = story
        self.session = self  # the messages the agent stores go to the story too

    async def add_message(self, role, text=None, **options):
        self.story.said.append((role, text))

    async def gate(self, tool, args, op=None, rationale=None, **options):
        self.story.said.append(("gate", rationale))
        if tool == "prescribe_medication":
            self.story.orders.append((args["patient_ref"], args["drug"]))
        return Allowed(args)

    async def report(self, tool_call_id, output, **options):
        pass

    async def clarify(self, tool, message, missing, *, args, **options):
        self.story.questions.append((args["patient_ref"], args["substance"]))
        return {"severity": "mild", "reactions": ["rash"]}


@pytest.fixture
def seeded(db, tmp_path, monkeypatch) -> Story:
    monkeypatch.setattr(seed_demo, "KEY_FILE", tmp_path / "demo-agent.key")
    call_command("seed_demo", stdout=io.StringIO())
    story = Story(sessions=list(Session.objects.values_list("title", "patient_ref", "care_unit")))
    for approval in Approval.objects.filter(status=ApprovalStatus.PENDING):
        if approval.reason_code == "clarification":
            story.questions.append((approval.args["patient_ref"], approval.args["substance"]))
        elif approval.tool == "prescribe_medication":
            story.orders.append((approval.args["patient_ref"], approval.args["drug"]))
    return story


@pytest.fixture
def demo(seeded) -> Story:
    """The seeded cards and one round of the demo agent's scenarios, as they meet in the inbox."""
    for scenario in demo_agent.SCENARIOS:
        seeded.sessions.append((scenario.title, scenario.patient_ref, ""))
        asyncio.run(scenario.steps(RecordingRun(seeded), lambda line: None))
    return seeded


def test_every_patient_lies_in_one_bed_and_every_bed_holds_one_patient(demo):
    beds, patients = {}, {}
    for title, patient, care_unit in demo.sessions:
        if found := BED.search(title):
            beds.setdefault(patient, set()).add(found.groups())
            patients.setdefault(found.groups(), set()).add(patient)
            assert care_unit in ("", found.group(1)), f"{title!r} is in {care_unit}"
    assert {patient: bed for patient, bed in beds.items() if len(bed) > 1} == {}
    assert {bed: who for bed, who in patients.items() if len(who) > 1} == {}
    assert len(beds) >= 4  # the demo's ward patients, not a regex that matched nothing


def test_no_drug_is_ordered_while_a_question_about_its_allergy_is_open(demo):
    assert demo.questions and demo.orders
    for patient, substance in demo.questions:
        assert substance in FORBIDS, f"the test does not know what an allergy to {substance} forbids"
        ordered = {drug for who, drug in demo.orders if who == patient}
        assert ordered & FORBIDS[substance] == set(), f"{patient}: {ordered} ordered, {substance} allergy asked"


def test_the_demo_agent_gates_every_call_with_a_rationale_after_saying_what_it_will_do(demo):
    gated = [index for index, (kind, _) in enumerate(demo.said) if kind == "gate"]
    assert len(gated) == 10  # every call of every scenario
    for index in gated:
        rationale = demo.said[index][1]
        assert isinstance(rationale, str) and 40 <= len(rationale) <= RATIONALE_MAX_CHARS, rationale
        assert demo.said[index - 1][0] == "assistant" and demo.said[index - 1][1], demo.said[index - 1]


def test_every_demo_conversation_opens_with_the_clinicians_request():
    assert all(len(scenario.request) > 20 for scenario in demo_agent.SCENARIOS)


def test_every_seeded_card_says_why_and_what_was_said_before(seeded):
    pending = Approval.objects.filter(status=ApprovalStatus.PENDING).select_related("session__client")
    for card in cards.cards_for(pending):
        assert card["turn"]["user"]["text"], card["tool"]
        if card["reason_code"] != "clarification":  # a question says why in its own words
            assert card["rationale"] and card["turn"]["agent"]["text"], card["tool"]
