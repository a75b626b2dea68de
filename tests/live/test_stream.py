"""GET runs/{id}/stream on a real daphne: read by the real `ai@6.0.0` client and by a raw SSE reader.

The agent side is plain HTTP against the same server with the owner's key; the
reviewer decides through the decision endpoint with a session cookie.
"""

import os

import pytest

from tests.helpers.approval_loop import approve, decide, gate, resume, suspend
from tests.helpers.node import needs_ai_client
from tests.helpers.runs import open_executing_run
from tests.helpers.waits import HANG_SECONDS, wait_for
from tests.live.conftest import DB_POOL_MAX
from tests.live.wire import (
    LiveAgent,
    SSEStream,
    chunk_type,
    finish_ai_client,
    read_with_ai_client,
    start_ai_client,
    tool_part,
)

# The server is another process: it sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
RESULT = {"prescription_id": "rx-2231", "status": "active"}
# How long a push may take on a loaded machine: a bound on the wait, not a measure of speed.
PUSH_WAIT = HANG_SECONDS


def stream_path(run_id) -> str:
    return f"/api/v1/runs/{run_id}/stream"


def open_stream(server, agent, run_id, **headers) -> SSEStream:
    return SSEStream(server.host, stream_path(run_id), {"Authorization": f"Api-Key {agent.key}", **headers})


REASON = "Penicillin allergy on file."
EDITED = {"drug": "amoxicillin", "dose": "250 mg", "route": "oral", "days": 7}


def reject(reviewer, approval_id, **extra):
    response = decide(reviewer, approval_id, {"approved": False, "reason": REASON, **extra})
    assert response.status_code == 200, response.content


def with_ids(events) -> list[tuple[str, str]]:
    return [(event.id, chunk_type(event)) for event in events if event.id is not None]


def run_group_size(run_id) -> int:
    """How many channels listen on the run's group in Redis (one per open stream)."""
    import redis
    from django.conf import settings

    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"]
    return redis.Redis.from_url(settings.REDIS_URL).zcard(f"{prefix}:group:run.{run_id}")


@pytest.fixture
def agent_http(live_agent):
    """`parked` parks its run over the live server."""
    return live_agent


@pytest.fixture
def rejected(parked, live_reviewer):
    """A run whose reviewer rejected its call and stopped it: its stream is complete."""
    run_id, approval = parked
    reject(live_reviewer, approval["id"], stop_run=True)
    return run_id, approval


# ------------------------------------------------------------------ the real `ai` client


@pytest.mark.node
@needs_ai_client
def test_a_parked_call_reads_as_an_approval_request(daphne_server, live_agent, parked):
    run_id, approval = parked
    message, stderr = read_with_ai_client(daphne_server.url(stream_path(run_id)), live_agent.key, until_heartbeat=True)
    assert "stopped at the server's heartbeat" in stderr  # the run is still open, so the server kept the stream open
    part = tool_part(message, "call-1")
    assert part["type"] == "tool-prescribe_medication"
    assert part["state"] == "approval-requested"
    assert part["approval"] == {"id": approval["id"]}
    assert part["input"] == approval["args"]


@pytest.mark.node
@needs_ai_client
def test_reject_and_stop_reads_as_output_denied_and_ends_the_stream(daphne_server, live_agent, live_reviewer, parked):
    run_id, approval = parked
    reader = start_ai_client(daphne_server.url(stream_path(run_id)), live_agent.key)  # read until the body ends
    reject(live_reviewer, approval["id"], stop_run=True)
    message, _ = finish_ai_client(reader)  # ends because the server closed the body after [DONE]
    assert tool_part(message, "call-1")["state"] == "output-denied"


def decision_part(message, approval_id) -> dict:
    (part,) = [p for p in message["parts"] if p["type"] == "data-approval-decision" and p.get("id") == approval_id]
    return part


@pytest.mark.node
@needs_ai_client
def test_a_rejection_reaches_the_waiting_agent_with_its_reason(daphne_server, live_agent, live_reviewer, parked):
    run_id, approval = parked
    reject(live_reviewer, approval["id"])  # denies the call; the run goes on, so its stream stays open
    message, stderr = read_with_ai_client(daphne_server.url(stream_path(run_id)), live_agent.key, until_heartbeat=True)
    assert "stopped at the server's heartbeat" in stderr
    assert tool_part(message, "call-1")["state"] == "output-denied"
    assert decision_part(message, approval["id"])["data"] == {
        "toolCallId": "call-1",
        "approved": False,
        "reason": REASON,
        "args": None,
        "payloadHash": None,
        "boundContext": {"patientRef": "", "ageBand": "unknown", "consent": False},
    }


@pytest.mark.node
@needs_ai_client
def test_an_edit_reaches_the_waiting_agent_as_the_args_to_run(daphne_server, live_agent, live_reviewer, parked):
    run_id, approval = parked
    reader = start_ai_client(daphne_server.url(stream_path(run_id)), live_agent.key)  # connected before the decision
    decided = approve(live_reviewer, approval["id"], edited_args=EDITED)
    # The agent runs what the chunk says, with no second request; then the run ends and so does the stream.
    assert resume(live_agent, run_id, approval["id"], EDITED).status_code == 200
    assert live_agent.post(f"/api/v1/runs/{run_id}/close/", {"reason": "completed"}).status_code == 200
    message, _ = finish_ai_client(reader)
    data = decision_part(message, approval["id"])["data"]
    assert (data["approved"], data["args"], data["payloadHash"]) == (True, EDITED, decided["payload_hash"])


def test_replay_after_a_reconnect_shows_the_same_decision_chunks(daphne_server, live_agent, live_reviewer, parked):
    run_id, approval = parked
    with open_stream(daphne_server, live_agent, run_id) as stream:
        live = stream.until(lambda event: chunk_type(event) == "tool-approval-request")
        approve(live_reviewer, approval["id"], edited_args=EDITED)
        live += stream.until(lambda event: chunk_type(event) == "data-approval-decision")
    with open_stream(daphne_server, live_agent, run_id) as stream:
        replayed = stream.until(lambda event: chunk_type(event) == "data-approval-decision")
    assert [(e.id, e.chunk) for e in replayed if e.id] == [(e.id, e.chunk) for e in live if e.id]
    assert replayed[-1].chunk["data"]["args"] == EDITED


@pytest.mark.node
@needs_ai_client
def test_an_approved_and_completed_call_reads_as_output_available(daphne_server, live_agent, live_reviewer, parked):
    run_id, approval = parked
    approve(live_reviewer, approval["id"])
    assert resume(live_agent, run_id, approval["id"], approval["args"]).status_code == 200
    reported = live_agent.post(f"/api/v1/runs/{run_id}/tool-calls/call-1/result/", {"output": RESULT})
    assert reported.status_code == 200, reported.content
    assert live_agent.post(f"/api/v1/runs/{run_id}/close/", {"reason": "completed"}).status_code == 200

    message, _ = read_with_ai_client(daphne_server.url(stream_path(run_id)), live_agent.key)
    part = tool_part(message, "call-1")
    assert (part["state"], part["output"]) == ("output-available", RESULT)


# ------------------------------------------------------------------ the raw wire


def test_a_closed_run_replays_then_finishes_and_closes(daphne_server, live_agent, rejected):
    run_id, _ = rejected
    with open_stream(daphne_server, live_agent, run_id) as stream:
        assert stream.response.getheader("x-vercel-ai-ui-message-stream") == "v1"
        assert stream.response.getheader("content-type") == "text/event-stream"
        events = stream.rest()
    assert [chunk_type(event) for event in events] == [
        "start",
        "start-step",
        "tool-input-available",
        "tool-approval-request",
        "data-approval-decision",
        "tool-output-denied",
        "finish-step",
        "finish",
        None,
    ]
    assert events[-1].data == "[DONE]"


def test_last_event_id_replays_only_the_frames_after_it(daphne_server, live_agent, rejected):
    run_id, _ = rejected
    with open_stream(daphne_server, live_agent, run_id) as stream:
        first = with_ids(stream.rest())
    assert [kind for _, kind in first] == [
        "tool-input-available",
        "tool-approval-request",
        "data-approval-decision",
        "tool-output-denied",
    ]

    with open_stream(daphne_server, live_agent, run_id, **{"Last-Event-ID": first[0][0]}) as stream:
        again = with_ids(stream.rest())
    assert again == first[1:]


def test_an_unreadable_last_event_id_replays_everything(daphne_server, live_agent, rejected):
    run_id, _ = rejected
    with open_stream(daphne_server, live_agent, run_id, **{"Last-Event-ID": "not-an-id"}) as stream:
        assert len(with_ids(stream.rest())) == 4


def test_a_last_event_id_past_the_end_of_a_closed_run_still_finishes(daphne_server, live_agent, rejected):
    run_id, _ = rejected
    with open_stream(daphne_server, live_agent, run_id, **{"Last-Event-ID": "999999999.0"}) as stream:
        events = stream.rest()
    assert [chunk_type(event) for event in events] == ["start", "start-step", "finish-step", "finish", None]


def test_a_suspend_arrives_live_without_a_reconnect(push_only_server, ward_agent):
    agent = LiveAgent(push_only_server.host, ward_agent.raw_key)
    run_id = open_executing_run(agent)
    allowed = gate(agent, run_id, tool="search_patients", args={"query": "MRN-1"})
    assert allowed.status_code == 200, allowed.content
    with open_stream(push_only_server, agent, run_id) as stream:
        # A frame of the allowed call has been replayed, so the stream has read the outbox;
        # it reads it again only in an hour, so what comes next can only be pushed.
        stream.until(lambda event: event.id is not None)
        approval = suspend(agent, run_id, tool_call_id="call-2", step_id="step-2")
        events = stream.until(lambda event: chunk_type(event) == "tool-approval-request", timeout=PUSH_WAIT)
    assert events[-1].chunk["approvalId"] == approval["id"]


def test_an_idle_stream_sends_heartbeat_comments(daphne_server, live_agent, parked):
    run_id, _ = parked
    with open_stream(daphne_server, live_agent, run_id) as stream:
        events = stream.until(lambda event: event.comment is not None)
    assert events[-1].comment == "keep-alive"
    assert events[-1].data is None
    assert "[DONE]" not in [event.data for event in events]  # still parked: the stream stays open


def test_another_clients_key_is_404(daphne_server, other_live_agent, parked):
    run_id, _ = parked
    answer = other_live_agent.get(stream_path(run_id))
    assert (answer.status_code, answer.json()["error"]) == (404, "not_found")


def test_a_deleted_sessions_stream_and_approval_are_404_to_their_owner(daphne_server, live_agent, api, parked):
    run_id, approval = parked
    session_id = live_agent.get(f"/api/v1/runs/{run_id}/").json()["session"]
    assert api.delete(f"/api/v1/sessions/{session_id}/").status_code == 204
    for path in (stream_path(run_id), f"/api/v1/approvals/{approval['id']}/"):
        answer = live_agent.get(path)
        assert answer.status_code == 404, (path, answer.content[:200])
        assert answer.json()["error"] == "not_found"


def test_no_key_is_401(daphne_server, live_agent, parked):
    run_id, _ = parked
    live_agent.key = None
    answer = live_agent.get(stream_path(run_id))
    assert (answer.status_code, answer.json()["error"]) == (401, "not_authenticated")


def test_an_unknown_key_is_401(daphne_server, live_agent, parked):
    run_id, _ = parked
    live_agent.key = "not.a-key"
    assert live_agent.get(stream_path(run_id)).status_code == 401


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="counts the stream's Redis group")
def test_a_client_going_away_ends_its_stream_and_the_server_keeps_serving(daphne_server, live_agent, parked):
    run_id, _ = parked
    log_start = len(daphne_server.log())  # the server is shared with the other live tests
    streams = [open_stream(daphne_server, live_agent, run_id) for _ in range(3)]
    for stream in streams:
        stream.until(lambda event: chunk_type(event) == "tool-approval-request")
    assert run_group_size(run_id) == 3
    for stream in streams:
        stream.close()
    # The view's generator was cancelled and left the run's group on its way out.
    wait_for(
        lambda: run_group_size(run_id) == 0,
        PUSH_WAIT,
        "the run's group to empty",
        lambda: f"{run_group_size(run_id)} channels left in it",
    )
    assert live_agent.get(f"/api/v1/runs/{run_id}/").json()["state"] == "suspended"
    with open_stream(daphne_server, live_agent, run_id) as stream:
        stream.until(lambda event: chunk_type(event) == "tool-approval-request")
    logged = daphne_server.log()[log_start:]
    assert " ERROR " not in logged, logged  # an exception in the view, or daphne's "Exception inside application"


def test_waiting_streams_do_not_hold_database_connections(daphne_server, live_agent, parked):
    run_id, _ = parked
    streams = [open_stream(daphne_server, live_agent, run_id) for _ in range(DB_POOL_MAX + 2)]
    try:
        for stream in streams:
            stream.until(lambda event: chunk_type(event) == "tool-approval-request")
        answer = live_agent.get(f"/api/v1/runs/{run_id}/")
        # A starved request waits out the pool's 10 s timeout, then fails with a 500.
        assert answer.status_code == 200
    finally:
        for stream in streams:
            stream.close()
