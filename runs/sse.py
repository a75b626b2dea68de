"""Server-sent-event encoding for the UI message stream. Pure helpers, no Django.

Event ids are "<event_seq>.<frame_index>": one outbox event can expand into several
frames (a suspend is two), and a client that reconnects with Last-Event-ID must
resume after the exact frame it saw, not re-render half an event.
"""

import json
import re

# The ai@6.0.0 UI_MESSAGE_STREAM_HEADERS minus "connection: keep-alive": that is a
# hop-by-hop header, which WSGI servers refuse and ASGI servers manage themselves.
STREAM_HEADERS = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    # nginx would otherwise buffer the stream and the card would arrive late.
    "x-accel-buffering": "no",
}

# The ai client skips this sentinel; the stream itself ends when the body closes,
# so the view must close the response right after sending it.
DONE = b"data: [DONE]\n\n"

_EVENT_ID = re.compile(r"([0-9]{1,18})\.([0-9]{1,18})", re.ASCII)


def encode(chunk: dict, event_id: str | None = None) -> bytes:
    # Compact json never contains a raw CR/LF (json escapes control characters,
    # ensure_ascii=False only keeps printable non-ASCII), so one chunk is one
    # `data:` line. U+2028/2029 are not SSE line breaks.
    data = json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))
    if event_id is None:
        return f"data: {data}\n\n".encode()
    event_id = str(event_id)
    # A line break would split the frame; a NUL makes the client ignore the id.
    if any(c in event_id for c in "\r\n\0"):
        raise ValueError("SSE event id must not contain CR, LF or NUL")
    return f"id: {event_id}\ndata: {data}\n\n".encode()


def heartbeat() -> bytes:
    # A comment line: keeps proxies from timing the connection out, ignored by clients.
    return b": keep-alive\n\n"


def event_id(seq: int, index: int) -> str:
    return f"{seq}.{index}"


def parse_last_event_id(value: str | None) -> tuple[int, int] | None:
    """(event_seq, frame_index) from a Last-Event-ID header; None if absent or
    garbage, which the stream treats as "replay from the start"."""
    if not value:
        return None
    match = _EVENT_ID.fullmatch(value.strip())
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))
