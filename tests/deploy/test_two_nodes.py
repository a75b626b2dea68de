"""Several web nodes (README "Production layout"): a gunicorn and two daphnes on one PostgreSQL and one Redis.

The agent speaks to gunicorn; the reviewer's socket is held by daphne B while she
decides through daphne A; the agent's stream starts on B and, after a reconnect
with Last-Event-ID, goes on from A. Every push crosses processes through Redis.
"""

import contextlib

import pytest

from tests.deploy.processes import gunicorn
from tests.deploy.websocket import WebSocket
from tests.helpers.approval_loop import approve, resume, suspend
from tests.helpers.runs import open_executing_run
from tests.live.server import DaphneServer
from tests.live.wire import LiveAgent, LiveBrowser, SSEStream, chunk_type

pytestmark = pytest.mark.usefixtures("catalog")
RESULT = {"prescription_id": "rx-2231", "status": "active"}


@pytest.fixture
def nodes(shared_env):
    """(gunicorn, daphne A, daphne B), all stopped at the end whatever happened."""
    with contextlib.ExitStack() as stack:
        web = stack.enter_context(gunicorn(shared_env))
        web.host = f"127.0.0.1:{web.ready.group(1)}"
        a = stack.enter_context(DaphneServer(shared_env))
        b = stack.enter_context(DaphneServer(shared_env))
        yield web, a, b


def inbox_socket(server, reviewer: LiveBrowser) -> WebSocket:
    return WebSocket(
        server.host, "/ws/inbox/", headers={"Origin": f"http://{server.host}", "Cookie": reviewer.cookie_header}
    )


def stream(server, agent, run_id, **headers) -> SSEStream:
    return SSEStream(server.host, f"/api/v1/runs/{run_id}/stream", {"Authorization": f"Api-Key {agent.key}", **headers})


def frames(events) -> list[tuple[str, dict]]:
    return [(event.id, event.chunk) for event in events if event.id is not None]


def test_a_run_crosses_three_web_nodes_and_its_stream_survives_a_move(nodes, ward_agent, rita):
    web, a, b = nodes
    agent = LiveAgent(web.host, ward_agent.raw_key)
    run_id = open_executing_run(agent)

    with inbox_socket(b, LiveBrowser(b.host, rita)) as socket_b, stream(b, agent, run_id) as on_b:
        assert socket_b.receive_json()["type"] == "snapshot"
        approval = suspend(agent, run_id)  # through gunicorn
        added = socket_b.receive_until(lambda message: message["type"] == "card.added")[-1]
        assert added["card"]["id"] == approval["id"]

        approve(LiveBrowser(a.host, rita), approval["id"])  # through daphne A
        removed = socket_b.receive_until(lambda message: message["type"] == "card.removed")[-1]
        assert (removed["id"], removed["status"]) == (approval["id"], "approved")
        seen_on_b = on_b.until(lambda event: chunk_type(event) == "data-approval-decision")

    # The agent goes on through gunicorn while its stream is away; it comes back on daphne A.
    assert resume(agent, run_id, approval["id"], approval["args"]).status_code == 200
    reported = agent.post(f"/api/v1/runs/{run_id}/tool-calls/call-1/result/", {"output": RESULT})
    assert reported.status_code == 200, reported.content
    last_id = frames(seen_on_b)[-1][0]
    with stream(a, agent, run_id, **{"Last-Event-ID": last_id}) as on_a:
        seen_on_a = on_a.until(lambda event: chunk_type(event) == "tool-output-available")
        assert agent.post(f"/api/v1/runs/{run_id}/close/", {"reason": "completed"}).status_code == 200
        seen_on_a += on_a.rest()
    assert seen_on_a[-1].data == "[DONE]"

    with stream(b, agent, run_id) as replay:  # the whole run, from the outbox
        everything = frames(replay.rest())
    received = frames(seen_on_b) + frames(seen_on_a)
    assert received == everything  # every frame exactly once, in order, across the move
    ids = [tuple(int(part) for part in frame_id.split(".")) for frame_id, _ in received]  # "<event>.<frame>"
    assert ids == sorted(set(ids))
    types = [chunk["type"] for _, chunk in received if chunk]
    assert (
        types.index("tool-approval-request")
        < types.index("data-approval-decision")
        < types.index("tool-output-available")
    )
