"""A hung Redis (connections accepted, nothing ever answered) never holds a request: only the push thread waits on it.

The request queues its push (runs/push_queue.py) and answers. The push thread sits in
the silent Redis until PUBLISH_TIMEOUT_SECONDS or until the connection drops, the
queue fills behind it up to MAX_QUEUED, and every event stays unpublished for the drainer.
"""

import pytest
from django.test import override_settings

from approvals.models import ApprovalStatus
from runs import publish, push_queue
from runs.models import RunEvent
from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run
from tests.runs.silent_redis import SilentRedis

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# Far longer than any request: a request that waited for its push would take this long.
STUCK_PUSH_SECONDS = 30
# The push thread has sent its first command by then on any machine.
COMMAND_SENT_SECONDS = 10


@pytest.fixture
def silent_redis(monkeypatch):
    monkeypatch.setattr(publish, "PUBLISH_TIMEOUT_SECONDS", STUCK_PUSH_SECONDS)
    redis = SilentRedis()
    with override_settings(CHANNEL_LAYERS=redis.channel_layers()):
        yield redis
    redis.stop()


def let_go(redis) -> None:
    """Redis drops every connection: the stuck push fails, and so does every push queued behind it."""
    redis.stop()
    assert publish.flush(COMMAND_SENT_SECONDS)


def suspend_event(response) -> RunEvent:
    return RunEvent.objects.get(kind="approval.suspended", data__approval_id=response.json()["approval"]["id"])


def test_the_gate_answers_while_redis_still_holds_the_push(api, silent_redis):
    run_id = open_executing_run(api)  # its own pushes are the first to sit in the silent Redis
    failed_before = publish.publish_stats["failed"]

    response = gate(api, run_id)

    assert response.status_code == 202, response.content
    assert response.json()["approval"]["status"] == ApprovalStatus.PENDING
    # The request is back, and the push thread is still in the silent Redis (held there
    # for STUCK_PUSH_SECONDS) with this request's push queued behind: nobody waited it out.
    assert silent_redis.wait_for_a_command(COMMAND_SENT_SECONDS)
    assert not publish.flush(timeout=0)
    assert suspend_event(response).published_at is None

    let_go(silent_redis)
    assert publish.publish_stats["failed"] > failed_before
    assert suspend_event(response).published_at is None  # left for the drainer: nothing went out


def test_a_full_push_queue_leaves_new_pushes_to_the_drainer(api, silent_redis, monkeypatch):
    monkeypatch.setattr(push_queue, "MAX_QUEUED", 1)  # the push stuck in the silent Redis takes the only place
    run_id = open_executing_run(api)
    assert silent_redis.wait_for_a_command(COMMAND_SENT_SECONDS)
    skipped_before = publish.publish_stats["skipped"]

    response = gate(api, run_id)

    assert response.status_code == 202, response.content
    assert publish.publish_stats["skipped"] == skipped_before + 1  # the suspend's event, refused by the queue
    let_go(silent_redis)
    assert suspend_event(response).published_at is None
