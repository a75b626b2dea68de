"""A hung Redis (connections accepted, nothing ever answered) holds a request no longer than CONDOR_PUSH_TIMEOUT_MS.

The request pushes after its commit and waits for the push (runs/publish.py), but
only that long: then the push is abandoned, counted, and its event stays unpublished
until the drainer delivers it once Redis answers again.
"""

import time

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from approvals.models import ApprovalStatus
from runs import publish
from runs.listeners import Listening
from runs.models import RunEvent
from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run
from tests.runs.silent_redis import SilentRedis

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

PUSH_TIMEOUT_MS = 300
# The layer's own read timeout, far longer than any request: a request that waited for
# Redis itself would take this long.
LAYER_SOCKET_TIMEOUT_SECONDS = 30
# A request that gave up on its push after PUSH_TIMEOUT_MS answers well within this, on a loaded machine too.
ANSWERED_WITHIN_SECONDS = 10


@pytest.fixture
def answering_layers() -> dict:
    """The test run's own channel layers, on a Redis that answers."""
    from django.conf import settings

    return settings.CHANNEL_LAYERS


@pytest.fixture
def silent_redis(answering_layers):
    redis = SilentRedis()
    with override_settings(
        CHANNEL_LAYERS=redis.channel_layers(socket_timeout=LAYER_SOCKET_TIMEOUT_SECONDS),
        CONDOR_PUSH_TIMEOUT_MS=PUSH_TIMEOUT_MS,
    ):
        yield redis
    redis.stop()


def streamed_run(api) -> str:
    """A new executing run that someone streams: its pushes are tried."""
    run_id = open_executing_run(api)
    async_to_sync(Listening(publish.run_group(run_id)).mark)()
    return run_id


def suspend_event(response) -> RunEvent:
    return RunEvent.objects.get(kind="approval.suspended", data__approval_id=response.json()["approval"]["id"])


def test_the_gate_answers_once_its_push_times_out(api, silent_redis):
    run_id = streamed_run(api)
    failed_before = publish.publish_stats["failed"]

    started = time.monotonic()
    response = gate(api, run_id)
    waited = time.monotonic() - started

    assert response.status_code == 202, response.content
    assert response.json()["approval"]["status"] == ApprovalStatus.PENDING
    assert silent_redis.holds_a_command()  # the push really was sent, and never answered
    assert PUSH_TIMEOUT_MS / 1000 <= waited < ANSWERED_WITHIN_SECONDS
    assert publish.publish_stats["failed"] == failed_before + 1
    assert suspend_event(response).published_at is None  # left for the drainer


def test_the_drainer_delivers_what_the_hung_redis_held_once_redis_answers(
    api, silent_redis, answering_layers, drain_now
):
    run_id = streamed_run(api)
    response = gate(api, run_id)
    assert suspend_event(response).published_at is None

    with override_settings(CHANNEL_LAYERS=answering_layers):
        assert publish.drain() >= 1

    assert suspend_event(response).published_at is not None
