"""A hung Redis (connections accepted, nothing ever answered) adds at most the hand-off wait to a request.

The request waits CONDOR_PUBLISH_HANDOFF_MS for its own push, then goes on; the
push stays with the publisher loop, and the event stays unpublished for the drainer.
"""

import time

import pytest
from django.test import override_settings

from approvals.models import ApprovalStatus
from runs import publish
from runs.models import RunEvent
from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run
from tests.runs.silent_redis import SilentRedis

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

HANDOFF_MS = 100
# Far longer than the hand-off: a request that waited for its push would take this long.
STUCK_PUSH_SECONDS = 30


@pytest.fixture
def silent_redis(monkeypatch):
    monkeypatch.setattr(publish, "PUBLISH_TIMEOUT_SECONDS", STUCK_PUSH_SECONDS)
    redis = SilentRedis()
    with override_settings(CHANNEL_LAYERS=redis.channel_layers(), CONDOR_PUBLISH_HANDOFF_MS=HANDOFF_MS):
        yield redis
    redis.stop()


def suspend_timed(api, run_id):
    started = time.monotonic()
    response = gate(api, run_id)
    return response, time.monotonic() - started


def test_the_gate_answers_while_redis_still_holds_the_push(api, silent_redis):
    run_id = open_executing_run(api)
    late_before = publish.publish_stats["late"]

    response, elapsed = suspend_timed(api, run_id)

    assert response.status_code == 202, response.content
    # Bounded by the hand-off, nowhere near the stuck push (a loaded test box gets a generous margin).
    assert elapsed < HANDOFF_MS / 1000 + 2.0 < STUCK_PUSH_SECONDS
    # The request is back, and the push it started is still sitting in the silent Redis.
    assert silent_redis.holds_a_command()
    event = RunEvent.objects.get(kind="approval.suspended", data__approval_id=response.json()["approval"]["id"])
    assert event.published_at is None  # left for the drainer until a push really goes out
    assert publish.publish_stats["late"] > late_before  # the request gave up waiting, it did not finish the push
    assert response.json()["approval"]["status"] == ApprovalStatus.PENDING


def test_a_stuck_publisher_is_not_even_waited_on_once_full(api, silent_redis, monkeypatch):
    run_id = open_executing_run(api)
    monkeypatch.setattr(publish, "MAX_IN_FLIGHT", 0)  # every slot taken by pushes stuck in Redis
    skipped_before = publish.publish_stats["skipped"]

    response, _ = suspend_timed(api, run_id)

    assert response.status_code == 202, response.content
    assert publish.publish_stats["skipped"] > skipped_before
    assert RunEvent.objects.filter(run_id=run_id, published_at__isnull=True).exists()
