"""A dropped stream is picked up where it broke off (Last-Event-ID), and the decision still arrives."""

import threading

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

PRESCRIPTION = {"patient_ref": "MRN-7", "drug": "amoxicillin", "dose_mg": 500}


class _CutAfterTheRequest(httpx.SyncByteStream):
    """Passes the stream through until the approval request, then drops the connection."""

    def __init__(self, inner):
        self.inner = inner

    def __iter__(self):
        for chunk in self.inner:
            yield chunk
            if b"tool-approval-request" in chunk:
                raise httpx.ReadError("connection reset by the test")

    def close(self):
        self.inner.close()


class DropsTheFirstStream(httpx.BaseTransport):
    def __init__(self):
        self.inner = httpx.HTTPTransport()
        self.last_event_ids: list[str | None] = []
        self.reconnected = threading.Event()

    def handle_request(self, request):
        response = self.inner.handle_request(request)
        if not request.url.path.endswith("/stream"):
            return response
        self.last_event_ids.append(request.headers.get("Last-Event-ID"))
        if len(self.last_event_ids) == 1:
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                request=request,
                stream=_CutAfterTheRequest(response.stream),
            )
        self.reconnected.set()
        return response

    def close(self):
        self.inner.close()


def test_a_dropped_stream_resumes_after_the_last_event_seen(live_agent, rita_deciding):
    from condor_client import Condor

    transport = DropsTheFirstStream()

    def approve_once_reconnected(approval):
        assert transport.reconnected.wait(10)
        return {"approved": True}

    with (
        rita_deciding(approve_once_reconnected),
        Condor(f"http://{live_agent.host}", live_agent.key, transport=transport, wait_timeout=20) as condor,
        condor.session().run() as run,
    ):
        allowed = run.gate("prescribe_medication", PRESCRIPTION, op="create")
    assert allowed == PRESCRIPTION
    first, again = transport.last_event_ids[:2]
    assert first is None  # the first connection replays from the start
    # The reconnect names the approval request's frame: everything up to it was seen.
    assert again is not None and again.endswith(".1")
