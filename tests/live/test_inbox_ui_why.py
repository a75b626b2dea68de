"""A card that says why, in real Chromium (the harness plays the server): the agent's reason
first, a clinical sentence for why it needs a human, what the call does in a clinician's words,
the conversation turn that led to it folded, and the rule and run ids in a technical fold."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from registry.policy import RULES
from tests.live.axe_scan import serious_violations
from tests.live.inbox_demo import demo_cards
from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card, clarification_card, conversation_turn

pytestmark = pytest.mark.browser

WHY = "eGFR fell from 61 to 48 overnight; the renal protocol asks for a once-daily dose by weight."
ASKED = "Start gentamicin for the urosepsis in bay 3, dosed for her kidneys."
SAID = "Her eGFR is 48 this morning, so I will use the once-daily renal regimen at 5 mg/kg."


def test_the_agents_rationale_comes_first_under_its_own_heading(inbox):
    card = approval_card(tier="high", rationale=WHY)
    shown = inbox.open_one(card)

    why = shown.get_by_test_id("card-why")
    expect(why).to_be_visible()
    expect(why.get_by_role("heading", name="Why the agent wants this")).to_be_visible()
    expect(shown.get_by_test_id("card-rationale")).to_have_text(WHY)
    # It is the first thing under the card's title and patient line.
    order = shown.evaluate(
        "card => [...card.querySelectorAll('[data-testid=card-why], [data-testid=card-args], "
        "[data-testid=card-session-facts]')].map(el => el.dataset.testid)"
    )
    assert order == ["card-why", "card-session-facts", "card-args"]


def test_a_rationale_with_hidden_characters_is_marked_and_the_card_warns(inbox):
    shown = inbox.open_one(approval_card(rationale="Dose \u202e5.2\u202c mg as per the chart."))
    rationale = shown.get_by_test_id("card-rationale")
    expect(rationale).to_have_text("Dose ⟨U+202E⟩5.2⟨U+202C⟩ mg as per the chart.")
    expect(rationale.get_by_test_id("hidden-char")).to_have_count(2)
    expect(shown.get_by_test_id("card-hidden-warning")).to_be_visible()


def test_the_card_says_what_the_call_does_and_why_it_needs_a_clinician_in_clinical_words(inbox):
    prescription = approval_card(tier="high", tool="prescribe_medication", op="create")
    stop = approval_card(
        tier="high", tool="change_medication", op="discontinue", args={"medication": "warfarin", "reason": "INR 5.2"}
    )
    inbox.open([prescription, stop])

    first = inbox.card(prescription["id"])
    expect(first.get_by_test_id("card-action")).to_have_text("New prescription")
    expect(first.get_by_role("heading", level=2)).to_have_text("New prescription")
    expect(inbox.card(stop["id"]).get_by_test_id("card-action")).to_have_text("Discontinue medication")
    needs_you = first.get_by_test_id("card-needs-you")
    expect(needs_you).to_be_visible()
    expect(needs_you).to_have_text(f"Why it needs you {RULES['mutate.high-tier-always-approval'].explanation}")
    # No engineering words on the face of the card: ids and names wait in the technical fold.
    face = first.evaluate("card => card.innerText")
    for word in ("mutate.high-tier-always-approval", "prescribe_medication", "CREATE", "Run "):
        assert word not in face, f"{word!r} shows on the card: {face}"


ACTIONS = [
    # (tool, op, what the card's title says)
    ("prescribe_medication", "create", "New prescription"),
    ("change_medication", "discontinue", "Discontinue medication"),
    ("change_medication", "update", "Change medication"),
    ("record_vitals", "create", "Record vital signs"),
    ("record_allergy", "create", "Record allergy"),
    ("sign_document", "sign", "Sign document"),
    ("send_email", "send", "Send email"),
    ("submit_billing_claim", "create", "Submit billing claim"),
    ("ehr.medication_order", "create", "New medication order"),
    ("ehr.allergy_record", "delete", "Delete allergy record"),
    ("notes.append", "update", "Append notes"),
    ("web_search", "", "Web search"),
]


def test_what_a_call_does_is_said_from_its_tool_and_op(inbox):
    inbox.open([])
    said = inbox.page.evaluate(
        """async (calls) => {
        const { actionLabel } = await import('/static/inbox/labels.js');
        return calls.map(([tool, op]) => actionLabel(tool, op));
    }""",
        [[tool, op] for tool, op, _ in ACTIONS],
    )
    assert said == [label for *_, label in ACTIONS]


# How a number reads on a queue line, by its arg's name: a unit the name ends in, a rate as a rate.
NUMBERS = [
    ("dose_mg", 500, "500 mg"),
    ("dose_mg_per_kg", 5, "5 mg/kg"),  # never "5 kg": a weight where a dose is meant
    ("dose_mg_per_m2", 75, "75 mg/m²"),
    ("rate_ml_per_h", 42, "42 mL/h"),
    ("weight_kg", 72.4, "72.4 kg"),
    ("infusions_per_h", 3, "3"),  # a rate of something unnamed: never "3 h"
    ("doses_per_day", 2, "2"),
    ("count", 7, "7"),
]


def test_a_number_reads_with_the_unit_its_name_says(inbox):
    inbox.open([])
    said = inbox.page.evaluate(
        """async (numbers) => {
        const { valueText } = await import('/static/inbox/labels.js');
        return numbers.map(([key, value]) => valueText(key, value).text);
    }""",
        [[key, value] for key, value, _ in NUMBERS],
    )
    assert said == [text for *_, text in NUMBERS]


def test_the_rule_tool_and_ids_are_in_a_technical_fold(inbox):
    card = approval_card(
        tier="high", tool="prescribe_medication", op="create", run_id="7f3c2a10-0000-4000-8000-000000000001"
    )
    shown = inbox.open_one(card)
    fold = shown.get_by_test_id("card-technical")

    expect(fold.get_by_test_id("card-rule")).to_be_hidden()
    fold.get_by_text("Technical details").click()

    expect(fold.get_by_test_id("card-rule")).to_have_text("mutate.high-tier-always-approval")
    expect(fold.get_by_test_id("card-rule")).to_be_visible()
    expect(fold.get_by_test_id("card-tool")).to_have_text("prescribe_medication")
    expect(fold.get_by_test_id("card-op")).to_have_text("create")
    expect(fold.get_by_test_id("card-run-id")).to_have_text("7f3c2a10-0000-4000-8000-000000000001")
    expect(fold.get_by_test_id("card-call-id")).to_have_text(card["tool_call_id"])
    expect(fold.get_by_test_id("card-approval-id")).to_have_text(card["id"])


def test_the_conversation_turn_is_folded_until_the_reviewer_opens_it(inbox):
    shown = inbox.open_one(approval_card(rationale=WHY, turn=conversation_turn(ASKED, SAID)))
    fold = shown.get_by_test_id("card-turn")

    expect(fold).to_be_visible()
    expect(fold.get_by_test_id("turn-user-text")).to_be_hidden()
    fold.get_by_text("Conversation before this request").click()

    expect(fold.get_by_test_id("turn-user-text")).to_be_visible()
    expect(fold.get_by_test_id("turn-user-text")).to_have_text(ASKED)
    expect(fold.get_by_test_id("turn-agent-text")).to_have_text(SAID)
    expect(fold.get_by_test_id("turn-user")).to_contain_text(re.compile(r"User · \d\d:\d\d"))
    expect(fold.get_by_test_id("turn-agent")).to_contain_text("Agent, before this request")


def test_a_card_without_messages_shows_no_conversation_fold(inbox):
    shown = inbox.open_one(approval_card(rationale=WHY))
    expect(shown.get_by_test_id("card-turn")).to_be_hidden()
    expect(shown.get_by_test_id("card-why")).to_be_visible()


def test_only_what_was_said_is_shown_when_the_agent_said_nothing(inbox):
    shown = inbox.open_one(approval_card(turn=conversation_turn(ASKED, None)))
    shown.get_by_text("Conversation before this request").click()
    expect(shown.get_by_test_id("turn-user-text")).to_have_text(ASKED)
    expect(shown.get_by_test_id("turn-agent")).to_have_count(0)


def test_a_message_the_server_cut_ends_in_an_ellipsis_that_is_not_marked(inbox):
    turn = conversation_turn(ASKED, SAID)
    turn["agent"]["cut"] = True  # sessions_app/turns.py read only the start of a long message
    shown = inbox.open_one(approval_card(turn=turn))
    shown.get_by_text("Conversation before this request").click()
    expect(shown.get_by_test_id("turn-agent-text")).to_have_text(SAID + "…")
    expect(shown.get_by_test_id("card-turn").get_by_test_id("lookalike-char")).to_have_count(0)
    expect(shown.get_by_test_id("card-hidden-warning")).to_be_hidden()


def test_a_long_message_shows_its_start_and_the_rest_on_request(inbox):
    long = "Patient reports three days of dysuria and rigors. " * 20
    shown = inbox.open_one(approval_card(turn=conversation_turn(long.strip(), SAID)))
    shown.get_by_text("Conversation before this request").click()
    text = shown.get_by_test_id("turn-user-text")
    more = shown.get_by_test_id("turn-user-more")

    assert len(text.inner_text()) < 300 and text.inner_text().endswith("…")
    # Named for its card too, as every control on a card is (inbox/static/inbox/names.js).
    expect(more).to_have_accessible_name(re.compile(r"^Show more of the user’s message New medication order"))
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()

    expect(text).to_have_text(long.strip())
    expect(more).to_have_attribute("aria-expanded", "true")
    expect(more).to_have_accessible_name(re.compile(r"^Show less of the user’s message New medication order"))


def test_hidden_characters_in_the_conversation_are_marked_and_open_the_fold(inbox):
    tricked = "Give \u202e5.2\u202c mg, " + "as discussed on the ward round this morning. " * 10
    shown = inbox.open_one(approval_card(turn=conversation_turn(tricked, SAID)))

    fold = shown.get_by_test_id("card-turn")
    expect(fold).to_have_attribute("open", "")  # nothing the card warns of stays folded away
    expect(shown.get_by_test_id("card-hidden-warning")).to_be_visible()
    expect(fold.get_by_test_id("turn-user-text").get_by_test_id("hidden-char")).to_have_count(2)
    expect(fold.get_by_test_id("turn-user-more")).to_have_count(0)  # shown whole, marks and all


def test_a_question_card_shows_its_turn_and_sentence_too(inbox):
    shown = inbox.open_one(clarification_card(turn=conversation_turn("Book her cardiology follow-up.", None)))
    expect(shown.get_by_test_id("card-needs-you")).to_contain_text("The agent needs more information")
    expect(shown.get_by_test_id("card-turn")).to_be_visible()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_cards_reasons_and_open_folds_have_no_serious_violations(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    long = "Patient reports three days of dysuria and rigors. " * 20
    InboxHarness(page).open(
        [approval_card(tier="high", rationale=WHY, turn=conversation_turn(long, SAID))] + demo_cards()
    )
    for summary in page.locator("details.card__fold:not([hidden]) > summary").all():
        summary.click()
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)
