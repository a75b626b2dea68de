"""Every card says why the agent asked and in what session (issue 14): the rationale from the
gated call's metadata, the session's age band, consent and autonomy, and for a tainted session
the result that tainted it."""

from approvals import cards
from approvals.card_context import RATIONALE_MAX_CHARS
from approvals.models import Approval, ToolCall
from runs.models import RunEvent
from tests.helpers.approval_loop import gate, suspend
from tests.helpers.runs import open_executing_run


def card_of(approval_id) -> dict:
    return cards.cards_for(Approval.objects.filter(pk=approval_id).select_related("session__client"))[0]


def test_the_card_carries_the_agents_rationale_as_it_was_sent(api):
    run_id = open_executing_run(api)
    rationale = "Creatinine rose to 180; <b>halve</b> the dose per renal guidance."
    approval = suspend(api, run_id, metadata={"rationale": rationale, "model": "x"})

    assert card_of(approval["id"])["rationale"] == rationale  # text, as sent: the page never parses it


def test_no_rationale_is_none(api):
    approval = suspend(api, open_executing_run(api))
    assert card_of(approval["id"])["rationale"] is None


def test_a_long_rationale_stored_before_the_api_refused_one_is_capped(api):
    # The API refuses it now (test_rationale_api.py); a row stored before still makes a bounded card.
    approval = suspend(api, open_executing_run(api), metadata={"rationale": "Because."})
    ToolCall.objects.filter(run_id=approval["run"]).update(metadata={"rationale": "x" * (RATIONALE_MAX_CHARS + 50)})
    assert card_of(approval["id"])["rationale"] == "x" * RATIONALE_MAX_CHARS + "…"


def test_the_card_says_the_sessions_age_band_consent_and_the_runs_autonomy(api):
    approval = suspend(api, open_executing_run(api, age_band="teen", consent=True))
    card = card_of(approval["id"])
    assert {k: card["session"][k] for k in ("age_band", "consent", "tainted")} == {
        "age_band": "teen",
        "consent": True,
        "tainted": False,
    }
    assert card["autonomy"] == "guarded"
    assert card["tainted_by"] is None


def test_a_tainted_sessions_card_names_the_result_that_tainted_it(api):
    run_id = open_executing_run(api, age_band="adult")
    assert (
        gate(api, run_id, tool="web_search", op="", args={"q": "x"}, tool_call_id="search-1").json()["decision"]
        == "allow"
    )
    reported = api.post(f"/api/v1/runs/{run_id}/tool-calls/search-1/result/", {"output": {"hits": 1}}, format="json")
    assert reported.json()["session_tainted"] is True
    approval = suspend(api, run_id, tool_call_id="call-2", step_id="step-2")

    card = card_of(approval["id"])

    assert card["session"]["tainted"] is True
    assert card["tainted_by"]["tool"] == "web_search"
    assert card["tainted_by"]["at"] == ToolCall.objects.get(tool_call_id="search-1").reported_at.isoformat()


def test_a_tainted_sessions_card_is_pushed_with_its_rationale_and_taint(api):
    run_id = open_executing_run(api, age_band="adult")
    assert (
        gate(api, run_id, tool="web_search", op="", args={"q": "x"}, tool_call_id="search-1").json()["decision"]
        == "allow"
    )
    api.post(f"/api/v1/runs/{run_id}/tool-calls/search-1/result/", {"output": {"hits": 1}}, format="json")
    approval = suspend(
        api, run_id, tool_call_id="call-2", step_id="step-2", metadata={"rationale": "Sepsis screen positive."}
    )

    pushed = RunEvent.objects.get(run_id=run_id, kind="approval.suspended").inbox["card"]

    assert pushed["rationale"] == "Sepsis screen positive."
    assert (pushed["autonomy"], pushed["tainted_by"]["tool"]) == ("guarded", "web_search")
    # Read as the call parked (approvals/card_context.parked_context), it is what the page reads later.
    assert pushed["tainted_by"] == card_of(approval["id"])["tainted_by"]


def test_the_single_card_and_the_page_agree(api):
    approval = suspend(api, open_executing_run(api), metadata={"rationale": "Because."})
    assert cards.card(Approval.objects.get(pk=approval["id"])) == card_of(approval["id"])


def test_a_page_of_tainted_and_untainted_sessions_names_each_taint_once(api):
    # The page looks for taint sources only in tainted sessions' rows (card_context._for_runs).
    tainted_run = open_executing_run(api)
    assert (
        gate(api, tainted_run, tool="web_search", op="", args={"q": "x"}, tool_call_id="search-1").json()["decision"]
        == "allow"
    )
    api.post(f"/api/v1/runs/{tainted_run}/tool-calls/search-1/result/", {"output": {"hits": 1}}, format="json")
    tainted = suspend(api, tainted_run, tool_call_id="call-2", step_id="step-2")
    clean = suspend(api, open_executing_run(api))

    page = cards.cards_for(
        Approval.objects.filter(pk__in=[tainted["id"], clean["id"]]).select_related("session__client")
    )

    by_id = {card["id"]: card for card in page}
    assert by_id[tainted["id"]]["tainted_by"]["tool"] == "web_search"
    assert by_id[clean["id"]]["tainted_by"] is None
