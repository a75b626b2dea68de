"""examples/langgraph against a live server: a LangGraph agent whose tool node asks Condor; rita decides over the API."""

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from approvals.models import Approval, ToolCall
from runs.models import Run
from tests.helpers.processes import REPO
from tests.helpers.readme import fenced_block, run_shell

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ASKED = {"patient_ref": "MRN-7", "drug": "amoxicillin", "dose_mg": 1000}
EDITED = {"patient_ref": "MRN-7", "drug": "amoxicillin", "dose_mg": 500}
REASON = "Penicillin allergy on file."


def ward_round(condor, turns, *, thread_id="bed-7"):
    """Play `turns` through the example's graph in one Condor run: (messages, tools that ran, cards, run id)."""
    from condor_langgraph import Wiring, build_graph, converse
    from condor_langgraph.ward import scripted, ward_tools

    ran, cards = [], []

    def on_card(card):
        cards.append((card, list(ran)))  # what had run by the time the graph stopped for a reviewer

    session = condor.session(title="Bed 7", patient_ref="MRN-7", age_band="adult", autonomy="autonomous")
    with session.run(engine="langgraph") as run:
        messages = converse(
            build_graph(InMemorySaver()),
            Wiring(run, ward_tools(ran), scripted(turns)),
            "Morning round for bed 7.",
            thread_id=thread_id,
            on_card=on_card,
        )
    return messages, ran, cards, run.id


def tool_replies(messages):
    return [message for message in messages if isinstance(message, ToolMessage)]


def test_an_allowed_call_runs_without_an_interrupt(condor):
    vitals = {"patient_ref": "MRN-7", "heart_rate": 92, "spo2": 95}
    messages, ran, cards, run_id = ward_round(condor, [[("record_vitals", vitals)]])
    assert cards == []
    assert ran == [("record_vitals", vitals)]
    [reply] = tool_replies(messages)
    assert reply.status == "success"
    call = ToolCall.objects.get(run_id=run_id, tool_call_id=reply.tool_call_id)
    assert (call.decision, call.output) == ("allow", {"saved": True})  # the result went back to Condor
    assert Run.objects.get(pk=run_id).terminal_reason == "completed"


def test_a_parked_call_interrupts_with_the_card_and_runs_with_the_reviewers_edit(condor, rita_deciding):
    with rita_deciding(lambda approval: {"approved": True, "edited_args": EDITED}):
        messages, ran, cards, run_id = ward_round(condor, [[("prescribe_medication", ASKED)]])
    [(card, ran_before_decision)] = cards
    assert ran_before_decision == []
    assert (card["tool"], card["args"], card["rule_id"]) == (
        "prescribe_medication",
        ASKED,
        Approval.objects.get(run_id=run_id).rule_id,
    )
    assert ran == [("prescribe_medication", EDITED)]
    [reply] = tool_replies(messages)
    call = ToolCall.objects.get(run_id=run_id, tool_call_id=reply.tool_call_id)
    assert call.output["dose_mg"] == 500
    assert Approval.objects.get(pk=card["id"]).status == "consumed"


def test_a_rejected_call_does_not_run_and_the_agent_hears_why(condor, rita_deciding):
    with rita_deciding(lambda approval: {"approved": False, "reason": REASON}):
        messages, ran, cards, run_id = ward_round(condor, [[("prescribe_medication", ASKED)]])
    assert len(cards) == 1
    assert ran == []
    [reply] = tool_replies(messages)
    assert reply.status == "error" and REASON in reply.content
    assert REASON in messages[-1].content  # the agent's answer, after hearing it
    assert ToolCall.objects.get(run_id=run_id, tool_call_id=reply.tool_call_id).reported_at is None
    assert Run.objects.get(pk=run_id).terminal_reason == "completed"


def test_a_round_of_three_interrupts_only_for_the_prescriptions(condor, rita_deciding):
    from condor_langgraph.ward import ROUND

    answers = iter([{"approved": True, "edited_args": EDITED}, {"approved": False, "reason": REASON}])
    with rita_deciding(lambda approval: next(answers)):
        messages, ran, cards, _ = ward_round(condor, ROUND)
    assert [card["tool"] for card, _ in cards] == ["prescribe_medication", "prescribe_medication"]
    assert ran == [("record_vitals", ROUND[0][0][1]), ("prescribe_medication", EDITED)]
    assert [reply.status for reply in tool_replies(messages)] == ["success", "success", "error"]


@pytest.mark.timeout(300)
def test_the_readmes_command_runs_from_the_venv_and_waits_only_for_the_prescriptions(
    tmp_path, live_agent, daphne_server, rita_deciding
):
    command = fenced_block("langgraph-ward", REPO / "examples" / "langgraph" / "README.md").strip()
    key_file = tmp_path / "demo-agent.key"
    key_file.write_text(live_agent.key)
    answers = iter([{"approved": True, "edited_args": EDITED}, {"approved": False, "reason": REASON}])

    def rita(approval):
        if approval.tool != "prescribe_medication":  # should not have waited: let the round go on, say so below
            return {"approved": False, "reason": "Nothing but a prescription should wait for me."}
        return next(answers)

    with rita_deciding(rita):
        finished = run_shell(
            f"{command} --url {daphne_server.url()} --key-file {key_file}", cwd=REPO, env={}, timeout=240
        )
    assert finished.returncode == 0, finished.stderr
    waits = [line for line in finished.stdout.splitlines() if line.startswith("waiting for a reviewer:")]
    assert [line.split()[4] for line in waits] == ["prescribe_medication", "prescribe_medication"]
    vitals = ToolCall.objects.get(tool="record_vitals")
    assert (vitals.decision, vitals.output) == ("allow", {"saved": True})  # recorded at once, no card
    assert finished.stdout.strip().splitlines()[-1].startswith("Done.") and REASON in finished.stdout
