"""The body limit under real servers (SPEC section 9): gunicorn as daphne, JSON, form and multipart,
declared or chunked. Under bare gunicorn a chunked body (no Content-Length) was read as empty, so a
50 MB chunked POST sessions/ made a session with defaults (201), and a 50 MB multipart login form
with a CSRF cookie was read whole (200).

Both servers run with CONDOR_MAX_BODY_BYTES=4096, so "too large" is 50 KiB here.
"""

import contextlib
import http.client
import json

import pytest

from sessions_app.models import Session
from tests.deploy.processes import gunicorn
from tests.live.server import DaphneServer

LIMIT = 4096
TOO_LARGE = 50 * 1024
BOUNDARY = "condor-boundary"


@pytest.fixture(params=["gunicorn", "daphne"])
def server(request, shared_env):
    """host:port of the server under test, stopped at the end."""
    env = {**shared_env, "CONDOR_MAX_BODY_BYTES": str(LIMIT)}
    with contextlib.ExitStack() as stack:
        if request.param == "gunicorn":
            web = stack.enter_context(gunicorn(env))
            yield f"127.0.0.1:{web.ready.group(1)}"
        else:
            yield stack.enter_context(DaphneServer(env)).host


def send(host, path, body: bytes, headers: dict, *, chunked: bool):
    """POST `body`, with its Content-Length or chunked (no Content-Length, 1 KiB chunks)."""
    connection = http.client.HTTPConnection(host, timeout=30)
    try:
        if chunked:
            pieces = (body[i : i + 1024] for i in range(0, len(body), 1024))
            connection.request("POST", path, body=pieces, headers=headers, encode_chunked=True)
        else:
            connection.request("POST", path, body=body, headers={**headers, "Content-Length": str(len(body))})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def json_headers(agent):
    return {"Content-Type": "application/json", "Authorization": f"Api-Key {agent.raw_key}"}


def padded_title(size: int) -> bytes:
    return json.dumps({"title": "Ward 3", "pad": "x" * size}).encode()


def multipart(size: int) -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="username"\r\n\r\nrita\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="upload"; filename="a.bin"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n{'x' * size}\r\n--{BOUNDARY}--\r\n"
    ).encode()


def assert_too_large(answer):
    status, body = answer
    assert status == 413, body[:300]
    assert json.loads(body)["error"] == "payload_too_large"


def test_a_chunked_json_body_is_read_not_dropped(server, ward_agent):
    status, body = send(
        server, "/api/v1/sessions/", json.dumps({"title": "Ward 3"}).encode(), json_headers(ward_agent), chunked=True
    )
    assert status == 201, body
    assert json.loads(body)["title"] == "Ward 3"


def test_a_chunked_json_body_over_the_limit_is_413_and_makes_no_session(server, ward_agent):
    assert_too_large(send(server, "/api/v1/sessions/", padded_title(TOO_LARGE), json_headers(ward_agent), chunked=True))
    assert not Session.objects.exists()


def test_a_declared_json_body_over_the_limit_is_413(server, ward_agent):
    assert_too_large(
        send(server, "/api/v1/sessions/", padded_title(TOO_LARGE), json_headers(ward_agent), chunked=False)
    )


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_multipart_login_form_over_the_limit_is_413(server, chunked):
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}", "Cookie": "csrftoken=" + "a" * 32}
    assert_too_large(send(server, "/accounts/login/", multipart(TOO_LARGE), headers, chunked=chunked))


def test_a_form_body_over_the_limit_is_413(server):
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": "csrftoken=" + "a" * 32}
    assert_too_large(
        send(server, "/accounts/login/", b"username=rita&password=" + b"x" * TOO_LARGE, headers, chunked=True)
    )
