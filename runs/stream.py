"""GET runs/{id}/stream — the run as an AI SDK v6 UI message stream over SSE.

Replays the frames persisted in the run's outbox events, then follows the run
live through its Channels group (runs/stream_news.py) until it is terminal. The
database is the source of truth: a live message only says "something new happened",
and the view re-reads events after the last one it sent, so a missed or duplicated
push can neither skip nor repeat a frame. Heartbeats also re-read, which
covers a channel layer that is down.
"""

import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import connection
from django.http import JsonResponse, StreamingHttpResponse
from rest_framework_api_key.permissions import KeyParser

from agents.auth import client_for_key
from core.errors import StreamRequiresAsgi, error_body
from runs import frames, sse
from runs.models import Run, RunEvent
from runs.states import TERMINAL_STATES
from runs.stream_news import RunNews

logger = logging.getLogger(__name__)


def _released(function):
    """`function` off the event loop, handing its database connection back afterwards.

    A stream lives as long as its run is parked, often minutes; Django would keep
    the request's connection checked out of the pool until the response ends, so a
    pool's worth of waiting agents would starve every other request. Inside an
    atomic block (a test's transaction) the connection is left alone.
    """

    def call(*args):
        try:
            return function(*args)
        finally:
            if not connection.in_atomic_block:
                connection.close()  # with the pool: back to the pool, not a real disconnect

    return sync_to_async(call)


def _owned_run(request, run_id) -> Run | None | bool:
    raw_key = KeyParser().get(request)
    client = client_for_key(raw_key) if raw_key else None
    if client is None:
        return False
    return Run.objects.filter(pk=run_id, session__client=client, session__deleted_at__isnull=True).first()


def _events_after(run_id, after: tuple[int, int] | None):
    """(id-tagged frames after `after`, the new position, whether the run is terminal).

    A position is (event id, index of the last frame sent from it); a frameless
    event leaves index -1, so it is read once more next time and yields nothing.
    """
    # The run row first: the close committed its state and its event together, so a
    # terminal state read here means the closing frames are in the events read next.
    # Asking the events instead misses the close when a Last-Event-ID points past
    # it, and the stream would never finish.
    terminal = Run.objects.filter(pk=run_id, state__in=TERMINAL_STATES).exists()
    events = RunEvent.objects.filter(run_id=run_id).only("id", "frames").order_by("id")
    if after is not None:
        events = events.filter(id__gte=after[0])
    tagged, position = [], after
    for event in events:
        for index, frame in enumerate(event.frames):
            if after is None or (event.pk, index) > after:
                tagged.append((sse.event_id(event.pk, index), frame))
        position = max(position or (event.pk, -1), (event.pk, len(event.frames) - 1))
    return tagged, position, terminal


async def event_stream(run_id, after):
    """The run's SSE body: its events after `after` (replayed), then what it commits from now on, until it ends."""
    news = RunNews(run_id)
    try:
        # Subscribe before the replay so nothing committed in between is missed.
        await news.join()
        yield sse.encode(frames.start(str(run_id)))
        yield sse.encode(frames.start_step())
        position = after
        while True:
            tagged, position, terminal = await _released(_events_after)(run_id, position)
            for frame_id, frame in tagged:
                yield sse.encode(frame, frame_id)
            if terminal:
                yield sse.encode(frames.finish_step())
                yield sse.encode(frames.finish())
                yield sse.DONE
                return
            if not await news.wait(settings.CONDOR_STREAM_HEARTBEAT_SECONDS):
                yield sse.heartbeat()
    finally:
        # Also when the client went away: Django cancels the view's generator then.
        await news.leave()


async def run_stream(request, run_id):
    if request.method != "GET":
        return JsonResponse(error_body("method_not_allowed", "Use GET."), status=405)
    run = await _released(_owned_run)(request, run_id)
    if run is False:
        response = JsonResponse(error_body("not_authenticated", "This endpoint needs an API key."), status=401)
        response["WWW-Authenticate"] = "Api-Key"
        return response
    if run is None:
        return JsonResponse(error_body("not_found", "No such run."), status=404)
    if not isinstance(request, ASGIRequest):
        # Under WSGI (gunicorn) the stream would hold a worker thread until the run
        # ends, without noticing a client that went away: refuse at once instead.
        return JsonResponse(
            error_body(StreamRequiresAsgi.code, StreamRequiresAsgi.default_detail), status=StreamRequiresAsgi.status
        )
    after = sse.parse_last_event_id(request.headers.get("Last-Event-ID"))
    return StreamingHttpResponse(event_stream(run.pk, after), headers=sse.STREAM_HEADERS)
