"""Talking to a live daphne over real sockets: an agent, a reviewer's browser, an SSE reader.

`LiveAgent` and `LiveBrowser` answer like Django's test clients (`status_code`,
`json()`, `cookies`), so the helpers in tests/helpers/ drive a live
server unchanged. Plain http.client: nothing between the test and the wire.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import secrets
import socket
import string
import subprocess
import threading
import time
from dataclasses import dataclass
from http.cookies import SimpleCookie

from tests.helpers.node import NODE, TESTS_DIR
from tests.helpers.waits import HANG_SECONDS
from tests.helpers.wire import ClosedOnExit


@dataclass
class Answer:
    status_code: int
    content: bytes
    headers: dict

    def json(self):
        return json.loads(self.content)


def _request(host: str, method: str, path: str, body: bytes | None, headers: dict) -> Answer:
    connection = http.client.HTTPConnection(host, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return Answer(response.status, response.read(), dict(response.getheaders()))
    finally:
        connection.close()


class LiveAgent:
    """An agent runtime: JSON bodies and `Authorization: Api-Key <key>`."""

    def __init__(self, host: str, key: str | None):
        self.host, self.key = host, key

    def _headers(self, extra: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Api-Key {self.key}"
        # Django test-client style keyword headers (HTTP_IDEMPOTENCY_KEY=...) → real header names.
        for name, value in extra.items():
            headers[name.removeprefix("HTTP_").replace("_", "-").title()] = value
        return headers

    def post(self, path: str, body=None, format: str = "json", **headers) -> Answer:
        return _request(self.host, "POST", path, json.dumps(body or {}).encode(), self._headers(headers))

    def get(self, path: str, **headers) -> Answer:
        return _request(self.host, "GET", path, None, self._headers(headers))


class LiveBrowser:
    """A reviewer's browser: a session cookie made by logging in, and a CSRF cookie/header pair."""

    def __init__(self, host: str, user):
        from django.test import Client

        self.host = host
        login = Client()
        login.force_login(user)  # writes the session row the server will read
        # Any 32 alphanumerics are a valid CSRF secret; the page would get one from the server.
        token = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
        self.cookies = SimpleCookie()
        self.cookies["sessionid"] = login.cookies["sessionid"].value
        self.cookies["csrftoken"] = token

    @property
    def cookie_header(self) -> str:
        return "; ".join(f"{name}={morsel.value}" for name, morsel in self.cookies.items())

    def get(self, path: str) -> Answer:
        return _request(self.host, "GET", path, None, {"Cookie": self.cookie_header})

    def post(self, path: str, data: str, content_type: str = "application/json", **headers) -> Answer:
        sent = {"Content-Type": content_type, "Cookie": self.cookie_header}
        if "HTTP_X_CSRFTOKEN" in headers:
            sent["X-CSRFToken"] = headers["HTTP_X_CSRFTOKEN"]
        return _request(self.host, "POST", path, data.encode(), sent)


@dataclass
class SSEEvent:
    id: str | None = None
    data: str | None = None
    comment: str | None = None

    @property
    def chunk(self) -> dict | None:
        if self.data is None or self.data == "[DONE]":
            return None
        return json.loads(self.data)


class SSEStream(ClosedOnExit):
    """Reads the raw stream on a background thread; `next()` hands out parsed events in order."""

    def __init__(self, host: str, path: str, headers: dict):
        self.connection = http.client.HTTPConnection(host, timeout=30)
        self.connection.request("GET", path, headers=headers)
        self.sock = self.connection.sock  # getresponse may hand it over to the response
        self.response = self.connection.getresponse()
        self.events: queue.Queue[SSEEvent | None] = queue.Queue()  # None: the server ended the body
        if self.response.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        event = SSEEvent()
        try:
            while line := self.response.readline():
                line = line.decode().rstrip("\r\n")
                if not line:
                    self.events.put(event)
                    event = SSEEvent()
                    continue
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "":
                    event.comment = value
                elif name in ("id", "data"):
                    setattr(event, name, value)
        except Exception:  # noqa: BLE001 - the socket was shut down by close()
            pass
        self.events.put(None)

    def next(self, timeout: float = HANG_SECONDS) -> SSEEvent | None:
        """The next event (comments included); None once the body ended."""
        return self.events.get(timeout=timeout)

    def until(self, predicate, timeout: float = HANG_SECONDS) -> list[SSEEvent]:
        """Events up to and including the first that satisfies `predicate`."""
        seen, deadline = [], time.monotonic() + timeout
        while True:
            try:
                event = self.next(max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no such event within {timeout} s; saw {seen}") from None
            if event is None:
                raise AssertionError(f"stream ended before the expected event; saw {seen}")
            seen.append(event)
            if predicate(event):
                return seen

    def rest(self, timeout: float = HANG_SECONDS) -> list[SSEEvent]:
        """Every event until the server closes the body, which it must do within `timeout`."""
        seen, deadline = [], time.monotonic() + timeout
        try:
            while (event := self.next(max(0.0, deadline - time.monotonic()))) is not None:
                seen.append(event)
        except queue.Empty:
            raise AssertionError(f"the stream was still open after {timeout} s; saw {seen}") from None
        return seen

    def close(self) -> None:
        """Go away like a browser tab: FIN to the server, and the reader thread wakes up."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.connection.close()


def chunk_type(event: SSEEvent) -> str | None:
    chunk = event.chunk
    return chunk["type"] if chunk else None


# ---------------------------------------------------------------- the real `ai` client
READ_STREAM = TESTS_DIR / "js" / "read_stream.mjs"


def start_ai_client(
    url: str, key: str | None, *, last_event_id: str | None = None, until_heartbeat: bool = False
) -> subprocess.Popen:
    """tests/js/read_stream.mjs: `ai@6.0.0` reads `url`; its stdout is the final UIMessage JSON.

    `until_heartbeat`: read an open stream up to the server's first heartbeat, which it sends
    only after every frame it had (a parked run's stream would otherwise never end).
    """
    args = [NODE, str(READ_STREAM), url, key or ""]
    if last_event_id:
        args.append(last_event_id)
    env = {**os.environ, **({"READ_STREAM_UNTIL_HEARTBEAT": "1"} if until_heartbeat else {})}
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish_ai_client(reader: subprocess.Popen, timeout: float = 30) -> tuple[dict, str]:
    """Wait for the reader to end on its own: (final UIMessage, its stderr). It must have succeeded."""
    try:
        stdout, stderr = reader.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        reader.kill()
        raise AssertionError(f"the stream did not end within {timeout} s: {reader.communicate()}") from None
    assert reader.returncode == 0, stderr
    return json.loads(stdout), stderr


def read_with_ai_client(url: str, key: str | None, **kwargs) -> tuple[dict, str]:
    return finish_ai_client(start_ai_client(url, key, **kwargs))


def tool_part(message: dict, tool_call_id: str) -> dict:
    (part,) = [part for part in message["parts"] if part.get("toolCallId") == tool_call_id]
    return part
