"""A request never waits for its own push: its events go to the push queue (runs/push_queue.py) after commit.

One background thread pushes them and marks them published; a push that fails or
finds the queue full leaves `published_at` null, and the drainer sends it later.
"""

import asyncio
import threading

import pytest
from channels.layers import InMemoryChannelLayer, get_channel_layer

from runs import publish, push_queue
from runs.models import RunEvent
from runs.publish import drain, flush, publish_stats
from runs.push_queue import PushQueue
from tests.helpers.runs import make_run, transition

# Longer than any push takes on a working Redis, however loaded the machine.
PUSH_SECONDS = 10


@pytest.fixture
def redis_layer():
    layer = get_channel_layer()
    if isinstance(layer, InMemoryChannelLayer):
        pytest.skip("the in-memory layer (no REDIS_URL) is pushed to in the request: nothing to wait on")
    return layer


def transitioned(run) -> RunEvent:
    return RunEvent.objects.get(run_id=run["id"], kind="run.transitioned")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_request_answers_before_its_push_has_gone_out(api, redis_layer, monkeypatch):
    run = make_run(api, "pending")
    assert flush(PUSH_SECONDS)
    monkeypatch.setattr(publish, "PUBLISH_TIMEOUT_SECONDS", PUSH_SECONDS)  # held, not timed out
    released, real_send = threading.Event(), redis_layer.group_send

    async def held(group, message):
        await asyncio.to_thread(released.wait, PUSH_SECONDS)
        await real_send(group, message)

    monkeypatch.setattr(redis_layer, "group_send", held)

    assert transition(api, run["id"], "executing").status_code == 200

    assert not flush(timeout=0)  # answered, and its push still held
    assert transitioned(run).published_at is None
    released.set()
    assert flush(PUSH_SECONDS)
    assert transitioned(run).published_at is not None


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_push_that_finds_the_queue_full_is_left_to_the_drainer(api, redis_layer, monkeypatch):
    run = make_run(api, "pending")
    assert flush(PUSH_SECONDS)
    monkeypatch.setattr(push_queue, "MAX_QUEUED", 0)
    skipped_before = publish_stats["skipped"]

    assert transition(api, run["id"], "executing").status_code == 200

    assert publish_stats["skipped"] == skipped_before + 1
    assert flush(PUSH_SECONDS)
    assert transitioned(run).published_at is None
    assert drain() >= 1
    assert transitioned(run).published_at is not None


def test_the_push_thread_outlives_a_round_that_fails():
    rounds, idle = [], []

    def handler(items):
        rounds.append(items)
        if items == ["broken"]:
            raise RuntimeError("the database went away mid-round")

    queue = PushQueue(handler, idle=lambda: idle.append(True), name="test-push")
    assert queue.put("broken", 1)
    assert queue.flush(PUSH_SECONDS)
    assert queue.put("next", 1)
    assert queue.flush(PUSH_SECONDS)

    assert rounds == [["broken"], ["next"]]
    assert idle == [True, True]  # each time the queue ran dry


def test_pushes_queued_during_a_round_share_the_next_one():
    started, release, rounds = threading.Event(), threading.Event(), []

    def handler(items):
        rounds.append(items)
        started.set()
        release.wait(PUSH_SECONDS)

    queue = PushQueue(handler, idle=lambda: None, name="test-push")
    queue.put("first", 1)
    assert started.wait(PUSH_SECONDS)
    for item in ("a", "b", "c"):
        assert queue.put(item, 2)
    release.set()
    assert queue.flush(PUSH_SECONDS)

    assert rounds == [["first"], ["a", "b", "c"]]  # one stale-card read and one mark for the three


def test_the_queue_refuses_what_would_pass_max_queued(monkeypatch):
    monkeypatch.setattr(push_queue, "MAX_QUEUED", 3)
    release = threading.Event()
    queue = PushQueue(lambda items: release.wait(PUSH_SECONDS), idle=lambda: None, name="test-push")

    assert queue.put("two events", 2)
    assert not queue.put("two more", 2)  # still counted while its round is being pushed
    assert queue.put("one more", 1)
    release.set()
    assert queue.flush(PUSH_SECONDS)
