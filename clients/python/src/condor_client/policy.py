"""Shared decisions of both transports: which failures to retry, how long to back off, how to close.

Retrying is only safe where a repeat cannot do a thing twice: a request that
never reached the server (connection refused or timed out while connecting), a
read (GET), or a request with an Idempotency-Key, whose repeat the server
answers with its first answer.
"""

from __future__ import annotations

import time

import httpx

from condor_client.errors import CondorError, TimedOut
from condor_client.protocol import Call

# Back-off between attempts; its length is the number of retries.
RETRY_DELAYS = (0.25, 0.5, 1.0, 2.0)
# Gateway answers that mean "not now", not "no".
RETRY_STATUSES = frozenset({502, 503, 504})
# Reconnecting to a stream: quick at first, then at most every few seconds.
RECONNECT_DELAYS = (0.1, 0.5, 1.0, 2.0, 5.0)
CONNECT_TIMEOUT = 10.0
USER_AGENT = "condor-client/0.1"


def may_repeat(call: Call) -> bool:
    return call.method == "GET" or call.idempotency_key is not None


def retry_after_error(call: Call, error: httpx.TransportError, attempt: int) -> bool:
    never_sent = isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
    return attempt < len(RETRY_DELAYS) and (never_sent or may_repeat(call))


def retry_after_status(call: Call, status: int, attempt: int) -> bool:
    return attempt < len(RETRY_DELAYS) and status in RETRY_STATUSES and may_repeat(call)


def reconnect_delay(failures: int) -> float:
    return RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS) - 1)]


def headers_for(call: Call) -> dict[str, str]:
    return {"Idempotency-Key": call.idempotency_key} if call.idempotency_key else {}


def json_of(response: httpx.Response):
    try:
        return response.json()
    except ValueError:
        return {"error": "error", "detail": f"HTTP {response.status_code}: {response.text[:200]}"}


def client_options(base_url: str, api_key: str, timeout: float) -> dict:
    """httpx.Client / AsyncClient keyword arguments for talking to Condor's API."""
    return {
        "base_url": base_url.rstrip("/") + "/api/v1/",
        "headers": {"Authorization": f"Api-Key {api_key}", "User-Agent": USER_AGENT},
        "timeout": httpx.Timeout(timeout, connect=CONNECT_TIMEOUT),
    }


def stream_timeout(remaining: float) -> httpx.Timeout:
    # The read timeout is the time left to wait: a stream that stays silent that
    # long (heartbeats come every few seconds) is given up for a reconnect, or the wait ends.
    return httpx.Timeout(CONNECT_TIMEOUT, read=max(remaining, 0.1) + 0.5)


class Deadline:
    def __init__(self, approval_id: str, timeout: float):
        self.approval_id, self.timeout = approval_id, timeout
        self.at = time.monotonic() + timeout

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def check(self) -> float:
        remaining = self.remaining()
        if remaining <= 0:
            raise TimedOut(self.approval_id, self.timeout)
        return remaining


def close_reason(error: BaseException | None) -> str:
    """The run's terminal reason when its block ends with `error` (None: it completed)."""
    if error is None:
        return "completed"
    return "timeout" if isinstance(error, TimedOut) else "error"


def close_summary(error: BaseException | None) -> str | None:
    if error is None:
        return None
    code = error.code if isinstance(error, CondorError) else type(error).__name__
    return f"{code}: {error}"[:2000]
