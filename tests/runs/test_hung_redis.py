"""A hung Redis (connections accepted, nothing ever answered) adds at most the hand-off wait to a request.

The request waits CONDOR_PUBLISH_HANDOFF_MS for its own push, then goes on; the
push stays with the publisher loop, and the event stays unpublished for the drainer.
"""

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


def test_the_gate_answers_while_redis_still_holds_the_push(api, silent_redis):
    run_id = open_executing_run(api)
    late_before = publish.publish_stats["late"]

    response = gate(api, run_id)

    assert response.status_code == 202, response.content
    # The request is back, and the push it started is still sitting in the silent Redis
    # (held there for STUCK_PUSH_SECONDS): the request did not wait it out.
    assert silent_redis.holds_a_command()
    event = RunEvent.objects.get(kind="approval.suspended", data__approval_id=response.json()["approval"]["id"])
    assert event.published_at is None  # left for the drainer until a push really goes out
    # Counted when the request's wait for its push, of CONDOR_PUBLISH_HANDOFF_MS, ran out.
    assert publish.publish_stats["late"] > late_before
    assert response.json()["approval"]["status"] == ApprovalStatus.PENDING


def test_a_stuck_publisher_is_not_even_waited_on_once_full(api, silent_redis, monkeypatch):
    run_id = open_executing_run(api)
    monkeypatch.setattr(publish, "MAX_IN_FLIGHT", 0)  # every slot taken by pushes stuck in Redis
    skipped_before = publish.publish_stats["skipped"]

    response = gate(api, run_id)

    assert response.status_code == 202, response.content
    assert publish.publish_stats["skipped"] > skipped_before
    assert RunEvent.objects.filter(run_id=run_id, published_at__isnull=True).exists()
