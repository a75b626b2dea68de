"""Request bodies over CONDOR_MAX_BODY_BYTES are refused (413 payload_too_large) unread.

Two places enforce it, because each server reads bodies differently:

* Under daphne, Django's ASGI handler spools the *whole* body to a temporary file before
  any middleware or view runs, and a chunked body carries no Content-Length to check.
  ``BodySizeLimit`` wraps the ASGI app: it refuses a declared length over the limit at
  once and counts the bytes actually received, answering 413 as soon as they pass it.
* Under WSGI (gunicorn, the test client) the body is read lazily, by our strict JSON
  parser (condor/parsers.py), which checks Content-Length and never reads more than
  the limit plus one byte (``read_capped``).
"""

import json

from django.conf import settings

from condor.errors import PayloadTooLarge, error_body


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
    await send({"type": "http.response.start", "status": PayloadTooLarge.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
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
        pending = iter(received)

        async def replay():
            # The buffered messages first; then the live channel (Django listens for disconnects).
            message = next(pending, None)
            return message if message is not None else await receive()

        return await self.app(scope, replay, send)
