"""History: the conversation as AI SDK v6 UIMessages, gated calls with their approval state,
checked by the real `ai` package's `validateUIMessages` (SPEC sections 5, 7)."""

import json
import subprocess

import pytest

from tests.helpers.approval_loop import (
    CHART_READ,
    PRESCRIPTION,
    approve,
    clarify,
    decide,
    gate,
    report,
    resume,
    suspend,
)
from tests.helpers.node import NODE, TESTS_DIR, needs_ai_client
from tests.helpers.runs import append, open_executing_run, open_run


def validate_with_ai(messages):
    proc = subprocess.run(
        [NODE, str(TESTS_DIR / "js" / "validate_messages.mjs")],
        input=json.dumps(messages),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def session_of(run_id):
    from runs.models import Run

    return str(Run.objects.get(pk=run_id).session_id)


def history(api, session_id):
    response = api.get(f"/api/v1/sessions/{session_id}/history/")
    assert response.status_code == 200, response.content
    return response.json()


def tool_part(messages, call_id):
    (part,) = [
        p for m in messages for p in m["parts"] if p.get("toolCallId") == call_id and p["type"].startswith("tool-")
    ]
    return part


@pytest.fixture
def ward_round(api, catalog, reviewer_http):
    """A conversation whose one run has an allowed call with its result, an approved-and-run call,
    a rejected call and an approved call not yet resumed. Returns (session id, run id)."""
    run_id = open_executing_run(api, age_band="adult")
    session_id = session_of(run_id)
    append(api, session_id, "user", [{"type": "text", "text": "Start amoxicillin for Mrs Okafor."}], id="u1")
    assert (
        gate(
            api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="read", step_id="s-read"
        ).json()["decision"]
        == "allow"
    )
    assert report(api, run_id, "read", {"allergies": []}).status_code == 200
    granted = suspend(api, run_id, tool_call_id="rx", step_id="s-rx")
    approve(reviewer_http, granted["id"], reason="Indicated")
    assert resume(api, run_id, granted["id"]).status_code == 200
    assert report(api, run_id, "rx", {"order": "ord-1"}).status_code == 200
    refused = suspend(api, run_id, tool_call_id="rx2", step_id="s-rx2", args={**PRESCRIPTION, "days": 30})
    assert decide(reviewer_http, refused["id"], {"approved": False, "reason": "Too long"}).status_code == 200
    waiting = suspend(api, run_id, tool_call_id="rx3", step_id="s-rx3", args={**PRESCRIPTION, "days": 5})
    approve(reviewer_http, waiting["id"])
    append(
        api,
        session_id,
        "assistant",
        [
            {"type": "text", "text": "Prescribing."},
            {"type": "tool-prescribe_medication", "toolCallId": "rx", "state": "input-available", "input": {}},
        ],
        id="a1",
        run=run_id,
    )
    return session_id, run_id


def test_history_keeps_the_clients_messages_and_ids_in_order(api, ward_round):
    messages = history(api, ward_round[0])

    assert [(m["id"], m["role"]) for m in messages] == [("u1", "user"), ("a1", "assistant")]
    assert messages[1]["parts"][0] == {"type": "text", "text": "Prescribing."}


def test_each_gated_call_carries_its_state(api, ward_round):
    messages = history(api, ward_round[0])

    assert {call: tool_part(messages, call)["state"] for call in ("read", "rx", "rx2", "rx3")} == {
        "read": "output-available",
        "rx": "output-available",
        "rx2": "output-denied",
        "rx3": "approval-responded",
    }
    assert tool_part(messages, "rx")["output"] == {"order": "ord-1"}
    assert tool_part(messages, "rx")["approval"]["approved"] is True
    assert tool_part(messages, "rx2")["approval"] == {
        "id": tool_part(messages, "rx2")["approval"]["id"],
        "approved": False,
        "reason": "Too long",
    }
    assert "approval" not in tool_part(messages, "read")


def test_condors_state_replaces_the_part_the_client_stored(api, ward_round):
    messages = history(api, ward_round[0])

    rx_parts = [p for p in messages[1]["parts"] if p.get("toolCallId") == "rx"]
    assert len(rx_parts) == 1 and rx_parts[0]["state"] == "output-available"
    assert messages[1]["parts"].index(rx_parts[0]) == 1  # where the client had it


def test_decisions_are_data_parts_as_the_stream_sent_them(api, ward_round):
    messages = history(api, ward_round[0])

    decisions = [p for p in messages[1]["parts"] if p["type"] == "data-approval-decision"]
    assert [(d["data"]["toolCallId"], d["data"]["approved"]) for d in decisions] == [
        ("rx", True),
        ("rx2", False),
        ("rx3", True),
    ]


@needs_ai_client
def test_the_real_ai_client_accepts_the_history(api, ward_round):
    messages = history(api, ward_round[0])

    assert validate_with_ai(messages) == messages


@needs_ai_client
def test_a_pending_approval_a_withdrawal_and_a_clarification_validate_too(api, catalog, reviewer_http):
    run_id = open_executing_run(api)
    session_id = session_of(run_id)
    suspend(api, run_id, tool_call_id="first", step_id="s1")
    open_run(api, session_id)  # supersedes: the pending approval is withdrawn
    second = open_run(api, session_id)["id"]
    api.post(f"/api/v1/runs/{second}/transition/", {"to": "executing"}, format="json")
    asked = clarify(
        api, second, [{"name": "route", "hint": {"options": ["oral", "iv"]}}], tool_call_id="ask", step_id="s2"
    )
    assert asked.status_code == 202
    assert decide(reviewer_http, asked.json()["approval"]["id"], {"values": {"route": "oral"}}).status_code == 200
    suspend(api, second, tool_call_id="later", step_id="s3")

    messages = history(api, session_id)

    assert [m["id"] for m in messages][:1] == [f"run_{messages[0]['id'][4:]}"]
    assert tool_part(messages, "first")["state"] == "output-denied"
    assert tool_part(messages, "first")["approval"]["reason"] == "withdrawn"
    assert tool_part(messages, "ask")["state"] == "input-available"
    assert tool_part(messages, "later")["state"] == "approval-requested"
    assert any(p["type"] == "data-clarification" for m in messages for p in m["parts"])
    assert validate_with_ai(messages) == messages


def test_a_run_without_a_message_of_its_own_gets_one_where_its_first_call_happened(api, catalog):
    run_id = open_executing_run(api)
    session_id = session_of(run_id)
    append(api, session_id, "user", id="before")
    suspend(api, run_id, tool_call_id="c1", step_id="s1")
    append(api, session_id, "user", id="after")

    messages = history(api, session_id)

    assert [m["id"] for m in messages] == ["before", f"run_{run_id}", "after"]
    assert messages[1]["parts"][0] == {"type": "step-start"}


@needs_ai_client
def test_the_harness_refuses_what_the_ai_client_would(api):
    broken = [
        {
            "id": "a",
            "role": "assistant",
            "parts": [
                {
                    "type": "tool-x",
                    "toolCallId": "c",
                    "state": "output-denied",
                    "input": {},
                    "approval": {"id": "p", "approved": False, "reason": None},
                }
            ],
        }
    ]

    proc = subprocess.run(
        [NODE, str(TESTS_DIR / "js" / "validate_messages.mjs")],
        input=json.dumps(broken),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 1


def test_stored_parts_come_back_as_the_same_json_with_each_runs_parts_after_them(api):
    """History splices a message's stored parts into the body as text: escapes, non-ASCII and an
    empty list survive it, and the run's parts follow the client's whether spliced or merged."""
    from django.utils import timezone

    from runs import frames
    from runs.models import Run, RunEvent
    from sessions_app.models import Message, Session
    from tests.helpers.runs import make_session

    stored, now = Session.objects.get(pk=make_session(api)["id"]), timezone.now()
    said = {"type": "text", "text": 'She said "no" \\ 50 µg — O\u2019Kafor\u2028next line'}
    mentions = {"type": "text", "text": '"data-vitals" is not a part'}  # looks like a data part to a scan
    runs = []
    for n in range(3):
        run = Run.objects.create(
            session=stored, state="completed", terminal_reason="completed", last_activity_at=now, closed_at=now
        )
        RunEvent.objects.create(
            run=run,
            kind="tool.result",
            published_at=now,
            frames=[
                *frames.allowed_call_frames(f"call-{n}", "record_vitals", {"heart_rate": 70 + n}),
                *frames.result_frames(f"call-{n}", {"saved": n}),
            ],
        )
        runs.append(run)
    Message.objects.create(session=stored, role="user", message_id="u", parts=[said])
    for n, parts in enumerate(([said], [], [mentions])):
        Message.objects.create(session=stored, role="assistant", message_id=f"a{n}", run_id=runs[n].pk, parts=parts)

    response = api.get(f"/api/v1/sessions/{stored.pk}/history/")

    def vitals(n):
        return {
            "type": "tool-record_vitals",
            "toolCallId": f"call-{n}",
            "state": "output-available",
            "input": {"heart_rate": 70 + n},
            "output": {"saved": n},
        }

    assert response["Content-Type"] == "application/json"
    assert response.json() == [
        {"id": "u", "role": "user", "parts": [said]},
        {"id": "a0", "role": "assistant", "parts": [said, vitals(0)]},
        {"id": "a1", "role": "assistant", "parts": [vitals(1)]},
        {"id": "a2", "role": "assistant", "parts": [mentions, vitals(2)]},
    ]
    # As DRF's renderer wrote it: U+2028 escaped (JavaScript string literals refused it raw), UTF-8 otherwise.
    assert "\u2028".encode() not in response.content and "µg".encode() in response.content
