"""Our frames, SSE-encoded by runs/sse.py, read by the REAL `ai@6.0.0` client.

No Django: a throwaway http.server serves the body, tests/js/read_stream.mjs reads it
with DefaultChatTransport.reconnectToStream + readUIMessageStream. If the strict
6.0.0 schemas and our builder ever drift, these tests fail where a browser would.
"""

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jsonschema
import pytest

from runs import frames, sse
from tests.helpers.node import NODE, TESTS_DIR, needs_ai_client

SCRIPT = TESTS_DIR / "js" / "read_stream.mjs"

pytestmark = needs_ai_client


class StreamServer:
    """Serves canned bodies by path and remembers the request headers it saw."""

    def __init__(self):
        self.bodies: dict[str, tuple[int, bytes]] = {}
        self.hold_open = threading.Event()  # set() releases a held-open response
        self.hold = False
        self.requests: list = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                # self.headers is case-insensitive; node's fetch sends lowercase names.
                server.requests.append((self.path, self.headers))
                status, body = server.bodies.get(self.path, (404, b"not found"))
                self.send_response(status)
                for name, value in sse.STREAM_HEADERS.items():
                    self.send_header(name, value)
                self.end_headers()
                # HTTP/1.0 handler: the body ends when we close, as the real stream must.
                self.wfile.write(body)
                self.wfile.flush()
                if server.hold:  # a live stream of a parked run: no [DONE], no close
                    server.hold_open.wait(30)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"


@pytest.fixture
def server():
    srv = StreamServer()
    srv.thread.start()
    yield srv
    srv.hold_open.set()
    srv.httpd.shutdown()
    srv.httpd.server_close()


def sse_body(chunks):
    """Frame i gets id "1.i"; a heartbeat in the middle proves comments are ignored."""
    out = [sse.encode(chunk, sse.event_id(1, i)) for i, chunk in enumerate(chunks)]
    out.insert(1, sse.heartbeat())
    return b"".join(out) + sse.DONE


def run(chunks):
    return [frames.start("msg_1"), frames.start_step(), *chunks, frames.finish_step(), frames.finish()]


def read(server, body, *args, status=200, env=None):
    server.bodies["/api/v1/runs/r1/stream"] = (status, body)
    return subprocess.run(
        [NODE, str(SCRIPT), server.url("/api/v1/runs/r1/stream"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def read_message(server, chunks, *args):
    proc = read(server, sse_body(chunks), *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def tool_part(message, tool_call_id):
    (part,) = [p for p in message["parts"] if p.get("toolCallId") == tool_call_id]
    return part


SUSPEND = dict(approval_id="apr_1", tool_call_id="call_1", tool_name="prescribe", input={"drug": "amoxicillin"})


def test_approval_suspend_renders_an_approval_request(server):
    message = read_message(server, run(frames.suspend_frames(**SUSPEND, reason_code="approval")), "key_alice")
    assert message["id"] == "msg_1"
    part = tool_part(message, "call_1")
    assert part["type"] == "tool-prescribe"
    assert part["state"] == "approval-requested"
    assert part["approval"] == {"id": "apr_1"}
    assert part["input"] == {"drug": "amoxicillin"}


def test_the_harness_gets_exactly_the_url_with_the_api_key(server):
    read_message(server, run([]), "key_alice", "3.1")
    ((path, headers),) = server.requests
    assert path == "/api/v1/runs/r1/stream"
    assert headers["Authorization"] == "Api-Key key_alice"
    assert headers["Last-Event-ID"] == "3.1"


def test_an_open_stream_of_a_parked_run_can_be_read_up_to_its_heartbeat(server):
    server.hold = True
    body = (
        b"".join(
            sse.encode(c, sse.event_id(1, i))
            for i, c in enumerate(
                [frames.start("msg_1"), frames.start_step(), *frames.suspend_frames(**SUSPEND, reason_code="approval")]
            )
        )
        + sse.heartbeat()
    )
    proc = read(server, body, env={"READ_STREAM_UNTIL_HEARTBEAT": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "stopped at the server's heartbeat" in proc.stderr
    assert tool_part(json.loads(proc.stdout), "call_1")["state"] == "approval-requested"


def test_denied_suspend_ends_output_denied(server):
    chunks = [*frames.suspend_frames(**SUSPEND, reason_code="approval"), *frames.denied_frames("call_1")]
    assert tool_part(read_message(server, run(chunks)), "call_1")["state"] == "output-denied"


def test_the_decision_chunk_is_read_as_a_data_part(server):
    decision = frames.decision_frames(
        approval_id="apr_1",
        tool_call_id="call_1",
        approved=True,
        reason="Checked.",
        args={"drug": "amoxicillin"},
        payload_hash="ab" * 32,
    )
    chunks = [
        *frames.suspend_frames(**SUSPEND, reason_code="approval"),
        *decision,
        *frames.result_frames("call_1", {"ok": True}),
    ]
    message = read_message(server, run(chunks))
    (part,) = [p for p in message["parts"] if p["type"] == "data-approval-decision"]
    assert part == {"type": "data-approval-decision", "id": "apr_1", "data": decision[0]["data"]}
    assert tool_part(message, "call_1")["state"] == "output-available"


def test_a_rejection_decision_then_denial_reads_as_output_denied(server):
    chunks = [
        *frames.suspend_frames(**SUSPEND, reason_code="approval"),
        *frames.decision_frames(
            approval_id="apr_1", tool_call_id="call_1", approved=False, reason="Allergy.", args=None, payload_hash=None
        ),
    ]
    message = read_message(server, run(chunks))
    assert tool_part(message, "call_1")["state"] == "output-denied"
    assert [p["data"]["reason"] for p in message["parts"] if p["type"] == "data-approval-decision"] == ["Allergy."]


def test_approved_suspend_ends_output_available(server):
    chunks = [
        *frames.suspend_frames(**SUSPEND, reason_code="approval"),
        *frames.result_frames("call_1", {"prescription_id": 42}),
    ]
    part = tool_part(read_message(server, run(chunks)), "call_1")
    assert part["state"] == "output-available"
    assert part["output"] == {"prescription_id": 42}


def test_allowed_call_result_attaches_to_its_part(server):
    chunks = [
        *frames.allowed_call_frames("call_9", "lookup", {"q": "x"}),
        *frames.result_frames("call_9", "upstream down", is_error=True),
    ]
    part = tool_part(read_message(server, run(chunks)), "call_9")
    assert (part["state"], part["errorText"]) == ("output-error", "upstream down")


def test_clarification_suspend_renders_a_data_part(server):
    chunks = frames.suspend_frames(
        **SUSPEND,
        reason_code="clarification",
        message="Which dose?",
        schema={"type": "object"},
    )
    message = read_message(server, run(chunks))
    assert tool_part(message, "call_1")["state"] == "input-available"
    (data_part,) = [p for p in message["parts"] if p["type"] == "data-clarification"]
    assert data_part["id"] == "apr_1"
    assert data_part["data"] == {"toolCallId": "call_1", "message": "Which dose?", "schema": {"type": "object"}}


def test_an_error_after_the_request_erases_it(server):
    # Why a parked call must never get an error chunk (seed hitl-fix-park-not-reject):
    # the client keeps only the last state for a toolCallId, so the card is gone.
    chunks = [
        *frames.suspend_frames(**SUSPEND, reason_code="approval"),
        *frames.result_frames("call_1", "User refused permission to run tool", is_error=True),
    ]
    assert tool_part(read_message(server, run(chunks)), "call_1")["state"] == "output-error"


def test_a_chunk_with_an_extra_key_kills_the_stream(server):
    request = {"type": "tool-approval-request", "approvalId": "apr_1", "toolCallId": "call_1", "reason": "x"}
    chunks = run([frames.tool_input_available("call_1", "prescribe", {}), request])
    proc = read(server, sse_body(chunks))
    assert proc.returncode == 1
    assert "reason" in proc.stderr  # zod names the unrecognized key


def test_a_request_for_an_unopened_call_kills_the_stream(server):
    # Why suspend_frames always sends tool-input-available first.
    chunks = run([{"type": "tool-approval-request", "approvalId": "apr_1", "toolCallId": "call_1"}])
    proc = read(server, sse_body(chunks))
    assert proc.returncode == 1
    assert "no tool invocation found" in proc.stderr


def test_204_means_nothing_to_resume(server):
    proc = read(server, b"", status=204)
    assert (proc.returncode, proc.stdout.strip()) == (0, "null")


def test_an_error_status_fails_with_the_body(server):
    proc = read(server, b'{"code":"not_found"}', status=404)
    assert proc.returncode == 1
    assert "not_found" in proc.stderr


# Candidates for the transcription check: our shapes plus near misses.
CANDIDATES = [
    *frames.suspend_frames(**SUSPEND, reason_code="approval"),
    *frames.suspend_frames(**SUSPEND, reason_code="clarification", message="m", schema={}),
    *frames.denied_frames("c"),
    *frames.result_frames("c", None),
    *frames.result_frames("c", {"e": 1}, is_error=True),
    frames.start("m"),
    frames.start_step(),
    frames.finish_step(),
    frames.finish(),
    {"type": "start"},
    {"type": "start", "messageId": None},
    {"type": "start", "messageMetadata": None},
    {"type": "finish", "finishReason": "tool-calls"},
    {"type": "finish", "finishReason": "suspended"},
    {"type": "finish", "finishReason": None},
    {"type": "start-step", "id": "x"},
    {"type": "tool-input-available", "toolCallId": "c", "toolName": "t"},
    {"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": None, "dynamic": True},
    {"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": 1, "title": None},
    {
        "type": "tool-input-available",
        "toolCallId": "c",
        "toolName": "t",
        "input": 1,
        "providerMetadata": {"a": {"b": 1}},
    },
    {"type": "tool-approval-request", "approvalId": "a"},
    {"type": "tool-approval-request", "approvalId": 1, "toolCallId": "c"},
    {"type": "tool-output-available", "toolCallId": "c"},
    {"type": "tool-output-available", "toolCallId": "c", "output": 1, "preliminary": False},
    {"type": "tool-output-available", "toolCallId": "c", "output": 1, "toolName": "__suspend__"},
    {"type": "tool-output-error", "toolCallId": "c", "errorText": None},
    {"type": "tool-output-denied", "toolCallId": "c", "reason": "no"},
    {"type": "data-x"},
    {"type": "data-x", "data": None, "transient": True},
    {"type": "data-x", "data": 1, "id": None},
    {"type": "datax", "data": 1},
]


def test_the_json_schema_agrees_with_the_real_zod_schema():
    schema = json.loads((Path(__file__).parent / "ai_sdk_chunk_schemas.json").read_text())
    ours = [jsonschema.Draft202012Validator(schema).is_valid(c) for c in CANDIDATES]
    script = (
        'import { uiMessageChunkSchema } from "ai";'
        "const s = uiMessageChunkSchema();"
        "const cs = JSON.parse(process.argv[1]); const out = [];"
        "for (const c of cs) out.push((await s.validate(c)).success);"
        "console.log(JSON.stringify(out));"
    )
    # cwd=tests/ so the eval'd module resolves `ai` from tests/node_modules.
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", script, json.dumps(CANDIDATES)],
        cwd=TESTS_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    zod = json.loads(proc.stdout)
    mismatches = [(c, z) for c, o, z in zip(CANDIDATES, ours, zod, strict=True) if o != z]
    assert not mismatches, f"schema file disagrees with ai@6.0.0 (candidate, zod verdict): {mismatches}"
