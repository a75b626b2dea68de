"""Request bodies over CONDOR_MAX_BODY_BYTES are refused (413 payload_too_large) unread.

The limit holds for every body, JSON, form or multipart, under every server, in front of
Django (settings also cap Django's own form parsing, DATA_UPLOAD_MAX_MEMORY_SIZE and
FILE_UPLOAD_MAX_MEMORY_SIZE, at the same number):

* Under daphne, Django's ASGI handler spools the *whole* body to a temporary file before
  any middleware or view runs, and a chunked body carries no Content-Length to check.
  ``BodySizeLimit`` wraps the ASGI app: it refuses a declared length over the limit at
  once and counts the bytes actually received, answering 413 as soon as they pass it. A
  chunked body within the limit is handed on with the Content-Length it lacked: DRF reads
  a request without one as having no body.
* Under WSGI (gunicorn) ``WSGIBodySizeLimit`` wraps the app: a declared length over the
  limit is 413 unread. A chunked body (no Content-Length) is read here, up to the limit
  plus one byte, and handed on with its length, or refused (413): Django reads no more of
  a WSGI body than its Content-Length says, nor DRF of any, so without one the body read
  as empty and a POST sessions/ made a session with defaults. A
  server that does not say its input ends where the body does (``wsgi.input_terminated``,
  PEP 3333) gives no safe way to read one: 411 length_required.
* Behind both, the strict JSON parser (core/parsers.py) checks Content-Length and never
  reads more than the limit plus one byte (``read_capped``): the test client takes no
  server's path.
"""

import io
import json

from django.conf import settings

from core.errors import CondorError, LengthRequired, PayloadTooLarge, error_body


def max_body_bytes() -> int:
    return settings.CONDOR_MAX_BODY_BYTES


def _too_large_detail(limit: int) -> str:
    return f"The request body is larger than {limit} bytes; nothing was read or stored."


def _declared_length(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None  # absent or garbage: the bytes received are counted instead


def read_capped(stream, meta) -> bytes:
    """The body from a WSGI-style `stream`, or PayloadTooLarge if it is over the limit."""
    limit = max_body_bytes()
    declared = _declared_length(meta.get("CONTENT_LENGTH") or meta.get("HTTP_CONTENT_LENGTH"))
    if declared is not None and declared > limit:
        raise PayloadTooLarge(_too_large_detail(limit))
    raw = stream.read(limit + 1) if stream is not None else b""
    if len(raw) > limit:
        raise PayloadTooLarge(_too_large_detail(limit))
    return raw


async def _refuse(send, limit: int) -> None:
    body = json.dumps(error_body(PayloadTooLarge.code, _too_large_detail(limit))).encode()
    await send(
        {
            "type": "http.response.start",
            "status": PayloadTooLarge.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """ASGI middleware for HTTP: buffer at most the limit, then hand the body on to `app`."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = max_body_bytes()
        headers = dict(scope.get("headers") or ())
        declared = _declared_length(headers.get(b"content-length"))
        if declared is not None and declared > limit:
            return await _refuse(send, limit)
        received, size = [], 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break  # http.disconnect: Django sees it and gives up as it would have
            size += len(message.get("body", b""))
            if size > limit:
                return await _refuse(send, limit)
            if not message.get("more_body", False):
                break
        if declared is None and size:
            # A chunked body, counted whole now: say its length, as DRF reads no body without one.
            scope = {**scope, "headers": [*(scope.get("headers") or ()), (b"content-length", str(size).encode())]}
        pending = iter(received)

        async def replay():
            # The buffered messages first; then the live channel (Django listens for disconnects).
            message = next(pending, None)
            return message if message is not None else await receive()

        return await self.app(scope, replay, send)


_READ_SIZE = 64 * 1024


def _chunked(environ) -> bool:
    return "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()


def _read_at_most(stream, size: int) -> bytes:
    """Up to `size` bytes of `stream`, reading on until it ends (a chunked body arrives in pieces)."""
    parts, left = [], size
    while left > 0:
        part = stream.read(min(left, _READ_SIZE))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


_REASONS = {LengthRequired.status: "Length Required", PayloadTooLarge.status: "Content Too Large"}


def _wsgi_refusal(start_response, error: CondorError):
    body = json.dumps(error_body(error.code, error.detail)).encode()
    start_response(
        f"{error.status} {_REASONS[error.status]}",
        [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
    )
    return [body]


class WSGIBodySizeLimit:
    """WSGI middleware: refuse a body over the limit unread, and give a chunked one its length."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        limit = max_body_bytes()
        declared = _declared_length(environ.get("CONTENT_LENGTH"))
        if declared is not None and declared > limit:
            return _wsgi_refusal(start_response, PayloadTooLarge(_too_large_detail(limit)))
        if declared is None and _chunked(environ):
            if not environ.get("wsgi.input_terminated"):
                return _wsgi_refusal(start_response, LengthRequired())
            body = _read_at_most(environ["wsgi.input"], limit + 1)
            if len(body) > limit:
                return _wsgi_refusal(start_response, PayloadTooLarge(_too_large_detail(limit)))
            environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(body), str(len(body))
        return self.app(environ, start_response)
