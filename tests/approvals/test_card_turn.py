"""A card shows the conversation turn that led to its call (sessions_app/turns.py): the last thing
the clinician asked, and what the agent said before it made the call, from the session's messages.
Read with the card's other context, so a page of cards costs no query more."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import cards
from approvals.models import Approval, ReviewTeam
from runs.models import Run, RunEvent
from sessions_app import turns
from sessions_app.models import Message
from tests.helpers.approval_loop import clarify, suspend
from tests.helpers.runs import append, open_executing_run

URL = "/api/v1/inbox/cards/"
ASKED = "Start her on amoxicillin for the chest infection."
SAID = "Her CURB-65 is 1 and she has no penicillin allergy on file, so I will prescribe oral amoxicillin."


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def session_of(run_id) -> str:
    return str(Run.objects.get(pk=run_id).session_id)


def card_of(approval_id) -> dict:
    return cards.cards_for(Approval.objects.filter(pk=approval_id).select_related("session__client"))[0]


def said(api, run_id, role: str, *parts, linked: bool = False):
    extra = {"run": run_id} if linked else {}
    assert append(api, session_of(run_id), role, list(parts), **extra).status_code == 201


def test_the_card_carries_the_last_question_and_the_agents_words_before_the_call(api):
    run_id = open_executing_run(api)
    said(api, run_id, "user", text(ASKED))
    said(api, run_id, "assistant", text(SAID), linked=True)
    approval = suspend(api, run_id)

    turn = card_of(approval["id"])["turn"]

    assert (turn["user"]["text"], turn["agent"]["text"]) == (ASKED, SAID)
    assert turn["user"]["at"] == Message.objects.get(role="user").created_at.isoformat()


def test_the_agents_text_stops_at_the_calls_own_tool_part(api):
    run_id = open_executing_run(api)
    said(api, run_id, "user", text(ASKED))
    said(
        api,
        run_id,
        "assistant",
        {"type": "step-start"},
        text("Checking allergies first."),
        {"type": "tool-get_patient_summary", "toolCallId": "call-0", "state": "output-available"},
        text(SAID),
        {"type": "tool-prescribe_medication", "toolCallId": "call-1", "state": "input-available"},
        text("Prescribed; I will recheck in 48 hours."),
        linked=True,
    )
    approval = suspend(api, run_id, tool_call_id="call-1")

    assert card_of(approval["id"])["turn"]["agent"]["text"] == f"Checking allergies first.\n\n{SAID}"


def test_an_answer_to_an_earlier_question_is_not_this_turns(api):
    run_id = open_executing_run(api)
    said(api, run_id, "user", text("What is her latest creatinine?"))
    said(api, run_id, "assistant", text("It is 88 µmol/L, taken this morning."))
    said(api, run_id, "user", text(ASKED))
    approval = suspend(api, run_id)

    turn = card_of(approval["id"])["turn"]

    assert (turn["user"]["text"], turn["agent"]) == (ASKED, None)


def test_a_message_written_after_the_call_parked_is_not_shown_unless_it_is_the_runs(api):
    run_id = open_executing_run(api)
    said(api, run_id, "user", text(ASKED))
    approval = suspend(api, run_id)
    said(api, run_id, "user", text("Also book a chest X-ray."))
    said(api, run_id, "assistant", text("Another run's answer."))
    assert card_of(approval["id"])["turn"] == {
        "user": {"text": ASKED, "at": Message.objects.first().created_at.isoformat(), "cut": False},
        "agent": None,
    }

    said(api, run_id, "assistant", text(SAID), linked=True)  # the client stores the run's message at the end

    assert card_of(approval["id"])["turn"]["agent"]["text"] == SAID


def test_a_session_without_messages_has_no_turn(api):
    approval = suspend(api, open_executing_run(api))
    assert card_of(approval["id"])["turn"] is None


def test_long_text_is_cut_and_says_so(api):
    run_id = open_executing_run(api)
    said(api, run_id, "user", text("a" * (turns.TEXT_MAX_CHARS + 10)))
    approval = suspend(api, run_id)
    user = card_of(approval["id"])["turn"]["user"]
    assert (user["text"], user["cut"]) == ("a" * turns.TEXT_MAX_CHARS, True)


def test_a_huge_message_is_read_only_in_part(api):
    # Parts past the first HEAD_CHARS of the message's JSON are never read: what fitted is shown, marked cut.
    run_id = open_executing_run(api)
    filler = [{"type": "reasoning", "text": "x" * 1000} for _ in range(40)]
    said(api, run_id, "assistant", text(SAID), *filler, text("never read"), linked=True)
    approval = suspend(api, run_id)
    agent = card_of(approval["id"])["turn"]["agent"]
    assert (agent["text"], agent["cut"]) == (SAID, True)


def test_the_pushed_card_and_the_page_carry_the_same_turn(api, reviewer_http):
    run_id = open_executing_run(api)
    said(api, run_id, "user", text(ASKED))
    said(api, run_id, "assistant", text(SAID), linked=True)
    approval = suspend(api, run_id)

    pushed = RunEvent.objects.get(run_id=run_id, kind="approval.suspended").inbox["card"]
    [polled] = reviewer_http.get(URL).json()["cards"]

    assert pushed["turn"] == polled["turn"] == card_of(approval["id"])["turn"]
    assert pushed["turn"]["agent"]["text"] == SAID


def test_a_clarification_card_carries_its_turn_too(api):
    run_id = open_executing_run(api)
    said(api, run_id, "user", text("Record her penicillin allergy."))
    response = clarify(api, run_id, [{"name": "severity"}], tool="record_allergy", args={"substance": "penicillin"})
    assert response.status_code == 202, response.content

    pushed = RunEvent.objects.get(run_id=run_id, kind="approval.suspended").inbox["card"]

    assert pushed["turn"]["user"]["text"] == "Record her penicillin allergy."
    assert card_of(response.json()["approval"]["id"])["turn"] == pushed["turn"]


def test_a_reviewer_gets_the_turn_only_with_a_card_they_may_see(api, rita, rob, reviewer_http):
    ReviewTeam.objects.create(name="Ward 4", care_units=["Ward 4"]).members.set([rita])
    ReviewTeam.objects.create(name="Ward 6", care_units=["Ward 6"]).members.set([rob])
    run_id = open_executing_run(api, care_unit="Ward 6")
    said(api, run_id, "user", text(ASKED))
    suspend(api, run_id)

    page = reviewer_http.get(URL).json()

    assert page["cards"] == [] and ASKED not in str(page)


def test_the_turn_costs_a_page_no_query_more(api, reviewer_http):
    def queries_for_a_page(cards: int) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert len(reviewer_http.get(URL).json()["cards"]) == cards
        return len(queries)

    suspend(api, open_executing_run(api))
    without_messages = queries_for_a_page(1)
    for _ in range(4):
        run_id = open_executing_run(api)
        said(api, run_id, "user", text(ASKED))
        said(api, run_id, "assistant", text(SAID), linked=True)
        suspend(api, run_id)

    assert queries_for_a_page(5) == without_messages
