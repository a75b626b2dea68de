"""History over mixed runs is the same document, byte for byte in value, as the fixture holds.

The fixture (fixtures/history_mixed_runs.json) was written by the builder that held the whole
session at once (runs/session_history.py as of 8bb9f10); the builder that goes one run at a time
must give the same UIMessages. The conversation has a gated call in every state the stream can
leave one in (allowed, allowed with a result or an error, pending, approved and waiting, approved
with a result or an error, rejected, expired, a clarification asked, answered and declined), runs
owned by a text-only message (spliced) and by one that stored a part for the same call (merged),
a run owned twice (the later message wins), runs without a message (placed by their first frame),
and a run whose only event has no frames.
"""

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from runs import frames
from tests.helpers.node import needs_ai_client
from tests.sessions_app.test_history import validate_with_ai

FIXTURE = Path(__file__).parent / "fixtures" / "history_mixed_runs.json"
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def run_id(n: int) -> uuid.UUID:
    return uuid.UUID(int=0xC0DE_0000_0000_0000_0000_0000_0000_0000 + n)


def gated(
    call: str, tool: str, args: dict, approval: str, *, decision=None, reason=None, result=None, error=False
) -> list[list[dict]]:
    """The events' frames of one gated call: suspended, then decided (True/False), then its result."""
    events = [
        frames.suspend_frames(
            approval_id=approval, tool_call_id=call, tool_name=tool, input=args, reason_code="approval"
        )
    ]
    if decision is not None:
        events.append(
            frames.decision_frames(
                approval_id=approval,
                tool_call_id=call,
                approved=decision,
                reason=reason,
                args=args if decision else None,
                payload_hash="0" * 64 if decision else None,
            )
        )
    if result is not None:
        events.append(frames.result_frames(call, result, is_error=error))
    return events


def asked(call: str, approval: str, *, answer=None) -> list[list[dict]]:
    """A clarification: asked, then answered (a dict of values) or declined (False)."""
    schema = {"type": "object", "properties": {"route": {"enum": ["oral", "iv"]}}}
    events = [
        frames.suspend_frames(
            approval_id=approval,
            tool_call_id=call,
            tool_name="ask_clinician",
            input={},
            reason_code="clarification",
            message="Which route?",
            schema=schema,
        )
    ]
    if answer is not None:
        events.append(
            frames.decision_frames(
                approval_id=approval,
                tool_call_id=call,
                approved=bool(answer),
                reason=None if answer else "Not mine to say",
                args=answer or None,
                payload_hash=None,
            )
        )
    return events


RX = {"drug": "amoxicillin", "dose_mg": 500, "note": "pénicilline OK — «ja»"}
RUNS = {
    # Owned by a text-only message: its parts are spliced after the client's.
    1: [
        frames.allowed_call_frames("read-1", "get_patient_summary", {"mrn": "MRN-7"}),
        frames.result_frames("read-1", {"allergies": [], "weight_kg": 71.5}),
        *gated("rx-ok", "prescribe", RX, "ap-1", decision=True, reason="Indicated", result={"order": "ord-1"}),
        *gated("rx-no", "prescribe", {**RX, "days": 30}, "ap-2", decision=False, reason="Too long"),
        *gated("rx-wait", "prescribe", {**RX, "days": 5}, "ap-3", decision=True),
        *gated("rx-pending", "prescribe", {**RX, "days": 7}, "ap-4"),
    ],
    # Owned by a message that stored parts for the same calls: Condor's state replaces them in place.
    2: [
        *gated("rx-err", "prescribe", RX, "ap-5", decision=True, result="pharmacy offline", error=True),
        *gated("rx-expired", "prescribe", RX, "ap-6", decision=False, reason=frames.EXPIRED_REASON),
        *asked("ask-1", "cl-1", answer={"route": "oral"}),
        *asked("ask-2", "cl-2", answer=False),
        frames.allowed_call_frames("note-1", "write_note", {"text": 'line\u2028break "quoted" \\ back'}),
        frames.result_frames("note-1", {"error": "disk"}, is_error=True),
    ],
    # Without a message of its own: placed before the first message written after its first frame.
    3: [*asked("ask-3", "cl-3"), frames.allowed_call_frames("read-3", "get_patient_summary", {})],
    # Owned by two messages: the later one gets it.
    4: [*gated("rx-twice", "prescribe", RX, "ap-7", decision=True, result=None)],
    # Without a message, after every message.
    5: [*gated("rx-late", "prescribe", RX, "ap-8", decision=True, result={"order": "ord-8"})],
    # Its only event carries no frames: it adds nothing.
    6: [[]],
    # Without a message, its first frame at the same moment as run 3's: after it (commit order).
    7: [frames.allowed_call_frames("read-7", "get_patient_summary", {"mrn": "MRN-8"})],
}
FIRST_FRAME = {1: 1, 2: 4, 3: 5, 4: 6, 5: 20, 6: 2, 7: 5}  # minutes after T0
MESSAGES = [  # (id, role, run, parts, minutes after T0)
    ("u1", "user", None, [{"type": "text", "text": "Start amoxicillin for Mrs Okafor."}], 0),
    ("a1", "assistant", 1, [{"type": "text", "text": "Prescribing."}], 2),
    ("u2", "user", None, [{"type": "text", "text": "And the rest?"}], 3),
    (
        "a2",
        "assistant",
        2,
        [
            {"type": "step-start"},
            {"type": "tool-prescribe", "toolCallId": "rx-err", "state": "input-available", "input": {}},
            {"type": "text", "text": "Trying the pharmacy."},
            {"type": "data-clarification", "id": "cl-1", "data": {"stale": True}},
        ],
        4,
    ),
    ("u3", "user", None, [{"type": "text", "text": "Status?"}], 6),
    ("a3", "assistant", 4, [{"type": "text", "text": "first"}], 7),
    ("a4", "assistant", 4, [], 8),
    ("u4", "user", None, [{"type": "text", "text": "Thanks."}], 9),
]


def seed(api):
    from runs.models import Run, RunEvent
    from sessions_app.models import Message, Session
    from tests.helpers.runs import make_session

    session = Session.objects.get(pk=make_session(api)["id"])
    for n, events in RUNS.items():
        at = T0 + timedelta(minutes=FIRST_FRAME[n])
        run = Run.objects.create(
            id=run_id(n),
            session=session,
            state="completed",
            terminal_reason="completed",
            last_activity_at=at,
            closed_at=at,
        )
        for chunks in events:
            event = RunEvent.objects.create(run=run, kind="fixture", frames=chunks, published_at=at)
            RunEvent.objects.filter(pk=event.pk).update(created_at=at)
            at += timedelta(seconds=1)
    for message_id, role, n, parts, minutes in MESSAGES:
        message = Message.objects.create(
            session=session, message_id=message_id, role=role, parts=parts, run_id=run_id(n) if n else None
        )
        Message.objects.filter(pk=message.pk).update(created_at=T0 + timedelta(minutes=minutes))
    return session


def test_history_of_mixed_runs_is_the_fixture(api):
    session = seed(api)

    response = api.get(f"/api/v1/sessions/{session.pk}/history/")

    assert response.status_code == 200
    assert response.json() == json.loads(FIXTURE.read_text())


def test_the_admin_builder_gives_the_same_history(api):
    from runs.session_history import build_history

    assert build_history(seed(api)) == json.loads(FIXTURE.read_text())


@needs_ai_client
def test_the_real_ai_client_accepts_the_fixture():
    fixture = json.loads(FIXTURE.read_text())

    assert validate_with_ai(fixture) == fixture


def test_an_indent_in_the_accept_header_indents_the_history_as_drf_would(api):
    from rest_framework.renderers import JSONRenderer

    session, fixture = seed(api), json.loads(FIXTURE.read_text())

    indented = api.get(f"/api/v1/sessions/{session.pk}/history/", HTTP_ACCEPT="application/json; indent=2")
    compact = api.get(f"/api/v1/sessions/{session.pk}/history/", HTTP_ACCEPT="application/json")

    assert indented.status_code == 200 and indented["Content-Type"] == "application/json"
    assert indented.content == JSONRenderer().render(fixture, "application/json; indent=2")
    assert indented.content.startswith(b'[\n  {\n    "id": "u1"')
    assert b"\n" not in compact.content and compact.json() == fixture
