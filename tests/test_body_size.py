"""A request body over CONDOR_MAX_BODY_BYTES is 413 payload_too_large, refused unread (issue 9, item 2).

Under WSGI and the test client the strict JSON parser reads the body itself, so it
checks Content-Length and caps the bytes it reads; under daphne, Django spools the
whole body before any view, so core/body_limit.py's ASGI wrapper counts the bytes
as they arrive (a chunked body has no Content-Length to check).
"""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings

from approvals.models import ToolCall
from core.body_limit import BodySizeLimit, WSGIBodySizeLimit
from core.errors import PayloadTooLarge
from core.parsers import StrictJSONParser
from sessions_app.models import Session
from tests.helpers.http import raw_post
from tests.helpers.runs import open_executing_run

LIMIT = 4096


@pytest.fixture
def small_limit(settings):
    settings.CONDOR_MAX_BODY_BYTES = LIMIT
    return LIMIT


def padded_session(size: int) -> str:
    """A valid session body of exactly `size` bytes (JSON allows any amount of whitespace)."""
    head, tail = '{"title": "Ward 3"', "}"
    return head + " " * (size - len(head) - len(tail)) + tail


def assert_too_large(response):
    assert response.status_code == 413, response.content
    assert response.json()["error"] == "payload_too_large"
    assert str(settings.CONDOR_MAX_BODY_BYTES) in response.json()["detail"]


# --- Through the API (the parser) -------------------------------------------------------------


def test_the_default_limit_is_one_mebibyte():
    assert settings.CONDOR_MAX_BODY_BYTES == 1024 * 1024


def test_a_body_over_the_default_limit_is_413_and_nothing_is_stored(api, catalog):
    run_id = open_executing_run(api)
    big = json.dumps(
        {
            "tool_call_id": "call-1",
            "step_id": "step-1",
            "tool": "search_patients",
            "args": {"query": "x" * (1024 * 1024)},
        }
    )
    assert_too_large(raw_post(api, f"/api/v1/runs/{run_id}/tool-calls/", big))
    assert not ToolCall.objects.exists()


def test_a_body_one_byte_over_the_limit_is_refused(api, small_limit):
    body = padded_session(LIMIT + 1)
    assert len(body.encode()) == LIMIT + 1
    assert_too_large(raw_post(api, "/api/v1/sessions/", body))
    assert not Session.objects.exists()


def test_a_body_exactly_at_the_limit_is_accepted(api, small_limit):
    response = raw_post(api, "/api/v1/sessions/", padded_session(LIMIT))
    assert response.status_code == 201, response.content


def test_a_reviewers_decision_over_the_limit_is_refused(api, catalog, reviewer_http, small_limit):
    from tests.helpers.approval_loop import approval_row, decide, suspend

    approval = suspend(api, open_executing_run(api))
    response = decide(reviewer_http, approval["id"], {"approved": False, "reason": "x" * LIMIT})
    assert_too_large(response)
    assert approval_row(approval["id"]).status == "pending"


class CountingStream(io.BytesIO):
    """A request stream that remembers how many bytes were asked of it."""

    requested = 0

    def read(self, size=-1):
        self.requested = size
        return super().read(size)


class FakeRequest:
    def __init__(self, meta):
        self.META = meta


def test_the_parser_refuses_a_declared_length_over_the_limit_without_reading(small_limit):
    stream = CountingStream(b"{}")
    with pytest.raises(PayloadTooLarge):
        StrictJSONParser().parse(stream, parser_context={"request": FakeRequest({"CONTENT_LENGTH": str(LIMIT + 1)})})
    assert stream.requested == 0


def test_the_parser_reads_at_most_one_byte_past_the_limit_whatever_the_stream_holds(small_limit):
    # No Content-Length (a chunked body): the bytes read are capped all the same.
    stream = CountingStream(padded_session(50 * LIMIT).encode())
    with pytest.raises(PayloadTooLarge):
        StrictJSONParser().parse(stream, parser_context={"request": FakeRequest({})})
    assert stream.requested == LIMIT + 1
    assert stream.tell() == LIMIT + 1


# --- Under daphne (the ASGI wrapper) ----------------------------------------------------------


class InnerApp:
    """Stands in for Django: records whether it ran and the body it was handed."""

    def __init__(self):
        self.called, self.body = False, b""

    async def __call__(self, scope, receive, send):
        self.called = True
        while True:
            message = await receive()
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def serve(app, chunks, *, content_length=None):
    """Drive `app` with an HTTP request sent as `chunks`; returns (sent messages, chunks consumed)."""
    headers = [(b"content-type", b"application/json")]
    if content_length is not None:
        headers.append((b"content-length", str(content_length).encode()))
    scope = {"type": "http", "method": "POST", "path": "/api/v1/sessions/", "headers": headers}
    pending = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1} for i, chunk in enumerate(chunks)
    ]
    consumed, sent = [], []

    async def receive():
        message = pending.pop(0) if pending else {"type": "http.disconnect"}
        consumed.append(message)
        return message

    async def send(message):
        sent.append(message)

    async_to_sync(app)(scope, receive, send)
    return sent, len(consumed)


def answer_of(sent):
    status = sent[0]["status"]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return status, json.loads(body) if body else None


def test_asgi_refuses_a_declared_length_over_the_limit_before_reading(small_limit):
    inner = InnerApp()
    sent, consumed = serve(BodySizeLimit(inner), [b"{}"], content_length=LIMIT + 1)
    status, body = answer_of(sent)
    assert (status, body["error"]) == (413, "payload_too_large")
    assert consumed == 0 and not inner.called


def test_asgi_stops_reading_a_chunked_body_as_soon_as_it_passes_the_limit(small_limit):
    inner = InnerApp()
    chunks = [b"x" * 1024] * 100  # 100 KiB in 1 KiB chunks, no Content-Length
    sent, consumed = serve(BodySizeLimit(inner), chunks)
    assert answer_of(sent)[0] == 413
    assert consumed == LIMIT // 1024 + 1
    assert not inner.called


def test_asgi_hands_a_body_within_the_limit_on_intact(small_limit):
    inner = InnerApp()
    chunks = [b'{"title": ', b'"Ward 3"', b"}"]
    sent, _ = serve(BodySizeLimit(inner), chunks)
    assert answer_of(sent)[0] == 204
    assert inner.body == b'{"title": "Ward 3"}'


def test_the_served_application_applies_the_limit(small_limit):
    from condor.asgi import application

    sent, _ = serve(application, [b"x" * 1024] * 10)
    assert answer_of(sent) == (413, {"error": "payload_too_large", "detail": answer_of(sent)[1]["detail"]})


def test_the_limit_comes_from_the_environment():
    probe = "from django.conf import settings; print(settings.CONDOR_MAX_BODY_BYTES)"
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "condor.settings",
        "SECRET_KEY": "test-only",
        "CONDOR_MAX_BODY_BYTES": "2048",
    }
    process = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {probe}"],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip().splitlines()[-1] == "2048"


# --- Under gunicorn (the WSGI wrapper) -------------------------------------------------------


class WSGIApp:
    """Stands in for Django under WSGI: records the environ it was handed and the body it read."""

    def __init__(self):
        self.environ, self.body = None, b""

    def __call__(self, environ, start_response):
        self.environ = environ
        self.body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        start_response("204 No Content", [])
        return []


def serve_wsgi(app, body: bytes, *, content_length=None, chunked=False, terminated=True):
    """Call the WSGI `app` with a POST of `body`; returns (status line, body, input stream)."""
    stream = CountingStream(body)
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/api/v1/sessions/",
        "wsgi.input": stream,
        "wsgi.input_terminated": terminated,
    }
    if content_length is not None:
        environ["CONTENT_LENGTH"] = str(content_length)
    if chunked:
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
    answered = {}
    chunks = app(environ, lambda status, headers: answered.update(status=status, headers=headers))
    return answered["status"], b"".join(chunks), stream


def test_wsgi_refuses_a_declared_length_over_the_limit_before_reading(small_limit):
    inner = WSGIApp()
    status, body, stream = serve_wsgi(WSGIBodySizeLimit(inner), b"{}", content_length=LIMIT + 1)
    assert status.startswith("413") and json.loads(body)["error"] == "payload_too_large"
    assert inner.environ is None and stream.tell() == 0


def test_wsgi_hands_a_chunked_body_within_the_limit_on_with_its_length(small_limit):
    inner = WSGIApp()
    status, _, _ = serve_wsgi(WSGIBodySizeLimit(inner), b'{"title": "Ward 3"}', chunked=True)
    assert status.startswith("204")
    assert (inner.body, inner.environ["CONTENT_LENGTH"]) == (b'{"title": "Ward 3"}', "19")


def test_wsgi_reads_a_chunked_body_over_the_limit_one_byte_past_it_and_refuses_it(small_limit):
    inner = WSGIApp()
    status, body, stream = serve_wsgi(WSGIBodySizeLimit(inner), b"x" * (50 * LIMIT), chunked=True)
    assert status.startswith("413") and json.loads(body)["error"] == "payload_too_large"
    assert stream.tell() == LIMIT + 1 and inner.environ is None


def test_wsgi_refuses_a_chunked_body_it_cannot_find_the_end_of_with_411(small_limit):
    inner = WSGIApp()
    status, body, stream = serve_wsgi(WSGIBodySizeLimit(inner), b"{}", chunked=True, terminated=False)
    assert status.startswith("411")
    assert json.loads(body)["error"] == "length_required"
    assert stream.tell() == 0 and inner.environ is None


def test_the_served_wsgi_application_applies_the_limit():
    from condor.wsgi import application

    assert isinstance(application, WSGIBodySizeLimit)


def test_djangos_own_form_parsing_stops_at_the_same_limit():
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == settings.CONDOR_MAX_BODY_BYTES
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE == settings.CONDOR_MAX_BODY_BYTES


def test_asgi_gives_a_chunked_body_the_length_it_lacked(small_limit):
    seen = {}

    async def inner(scope, receive, send):
        seen.update(dict(scope["headers"]))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    serve(BodySizeLimit(inner), [b'{"title": ', b'"Ward 3"}'])
    assert seen[b"content-length"] == b"19"
