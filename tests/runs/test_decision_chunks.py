"""Every decision reaches the agent's stream as `data-approval-decision` (SPEC section 5).

The chunks are read back from the persisted outbox events, which is what both the
live push and the replay send; each is held to the strict ai@6.0.0 chunk schema.
"""

from datetime import timedelta

from django.utils import timezone

from approvals.models import Approval
from condor.sweeps import sweep
from runs.models import RunEvent
from tests.helpers.approval_loop import PRESCRIPTION, approve, clarify, decide, suspend
from tests.helpers.http import post_json
from tests.helpers.runs import open_executing_run
from tests.runs.test_frames import VALIDATOR

EDITED = {**PRESCRIPTION, "dose": "250 mg"}
DECISION_KEYS = {"toolCallId", "approved", "reason", "args", "payloadHash", "boundContext"}
# The patient context of the run_id fixture's session (no patient_ref, age unknown, no consent).
UNLINKED = {"patientRef": "", "ageBand": "unknown", "consent": False}


def stream_chunks(run_id) -> list[dict]:
    return [frame for event in RunEvent.objects.filter(run_id=run_id).order_by("id") for frame in event.frames]


def decision_of(run_id, approval_id) -> tuple[dict, list[dict]]:
    """(the decision chunk for `approval_id`, the chunks after it)."""
    chunks = stream_chunks(run_id)
    (at,) = [i for i, c in enumerate(chunks) if c["type"] == "data-approval-decision" and c["id"] == approval_id]
    VALIDATOR.validate(chunks[at])
    assert set(chunks[at]["data"]) == DECISION_KEYS
    return chunks[at], chunks[at + 1 :]


def test_an_approval_sends_the_args_to_run_and_their_hash(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    decided = approve(reviewer_http, approval["id"], reason="Dose checked.")
    chunk, after = decision_of(run_id, approval["id"])
    assert chunk == {
        "type": "data-approval-decision",
        "id": approval["id"],
        "data": {
            "toolCallId": "call-1",
            "approved": True,
            "reason": "Dose checked.",
            "args": PRESCRIPTION,
            "payloadHash": decided["payload_hash"],
            "boundContext": UNLINKED,
        },
    }
    assert not any(c["type"] == "tool-output-denied" for c in after)


def test_an_edit_sends_the_edited_args_so_the_agent_needs_no_second_request(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    decided = approve(reviewer_http, approval["id"], edited_args=EDITED)
    chunk, _ = decision_of(run_id, approval["id"])
    assert (chunk["data"]["args"], chunk["data"]["payloadHash"]) == (EDITED, decided["payload_hash"])
    assert decided["payload_hash"] != approval["payload_hash"]
    assert chunk["data"]["reason"] is None


def test_a_rejection_sends_the_reason_then_the_denial(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    decide(reviewer_http, approval["id"], {"approved": False, "reason": "Allergy."})
    chunk, after = decision_of(run_id, approval["id"])
    assert chunk["data"] == {
        "toolCallId": "call-1",
        "approved": False,
        "reason": "Allergy.",
        "args": None,
        "payloadHash": None,
        "boundContext": UNLINKED,
    }
    assert after[0] == {"type": "tool-output-denied", "toolCallId": "call-1"}


def test_an_answered_clarification_sends_its_decision(api, run_id, reviewer_http):
    parked = clarify(api, run_id, [{"name": "route", "type": "string"}]).json()["approval"]
    response = decide(reviewer_http, parked["id"], {"values": {"route": "oral"}})
    assert response.status_code == 200, response.content
    chunk, after = decision_of(run_id, parked["id"])
    assert (chunk["data"]["approved"], chunk["data"]["args"]) == (True, PRESCRIPTION)
    assert not any(c["type"] == "tool-output-denied" for c in after)


def test_a_declined_clarification_sends_the_reason_and_the_denial(api, run_id, reviewer_http):
    parked = clarify(api, run_id, [{"name": "route", "type": "string"}]).json()["approval"]
    decide(reviewer_http, parked["id"], {"approved": False, "reason": "Ask the prescriber."})
    chunk, after = decision_of(run_id, parked["id"])
    assert (chunk["data"]["approved"], chunk["data"]["reason"]) == (False, "Ask the prescriber.")
    assert after[0]["type"] == "tool-output-denied"


def test_an_expiry_sends_expired_and_the_denial(api, run_id):
    approval = suspend(api, run_id)
    Approval.objects.filter(pk=approval["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    sweep()
    chunk, after = decision_of(run_id, approval["id"])
    assert chunk["data"] == {
        "toolCallId": "call-1",
        "approved": False,
        "reason": "expired",
        "args": None,
        "payloadHash": None,
        "boundContext": UNLINKED,
    }
    assert after[0] == {"type": "tool-output-denied", "toolCallId": "call-1"}


def test_a_card_withdrawn_by_a_new_run_sends_withdrawn_and_the_denial(api, run_id):
    approval = suspend(api, run_id)
    session_id = Approval.objects.get(pk=approval["id"]).session_id
    assert api.post(f"/api/v1/sessions/{session_id}/runs/", {}, format="json").status_code == 201
    chunk, after = decision_of(run_id, approval["id"])
    assert chunk["data"] == {
        "toolCallId": "call-1",
        "approved": False,
        "reason": "withdrawn",
        "args": None,
        "payloadHash": None,
        "boundContext": UNLINKED,
    }
    assert after[0] == {"type": "tool-output-denied", "toolCallId": "call-1"}


def test_a_grant_withdrawn_by_a_stop_is_announced_as_withdrawn(api, run_id, reviewer_http):
    approval = suspend(api, run_id)
    approve(reviewer_http, approval["id"])
    assert post_json(reviewer_http, f"/api/v1/runs/{run_id}/stop/", {"reason": "Stop."}).status_code == 200
    decisions = [c for c in stream_chunks(run_id) if c["type"] == "data-approval-decision"]
    assert [c["data"]["approved"] for c in decisions] == [True, False]
    assert decisions[-1]["data"]["reason"] == "withdrawn"


def test_the_decision_chunk_names_the_patient_context_the_approval_is_bound_to(api, catalog, reviewer_http):
    run_id = open_executing_run(api, patient_ref="MRN-ALICE", age_band="adult", consent=True)
    approval = suspend(api, run_id)
    approve(reviewer_http, approval["id"])
    chunk, _ = decision_of(run_id, approval["id"])
    assert chunk["data"]["boundContext"] == {"patientRef": "MRN-ALICE", "ageBand": "adult", "consent": True}


def test_the_suspend_answer_and_the_decision_chunk_agree_on_the_tool_call(api, run_id, reviewer_http):
    response = api.post(
        f"/api/v1/runs/{run_id}/tool-calls/",
        {"tool_call_id": "rx-7", "step_id": "s", "tool": "prescribe_medication", "op": "create", "args": PRESCRIPTION},
        format="json",
    )
    approval = response.json()["approval"]
    approve(reviewer_http, approval["id"])
    chunk, _ = decision_of(run_id, approval["id"])
    assert chunk["data"]["toolCallId"] == response.json()["frames"][0]["toolCallId"] == "rx-7"
