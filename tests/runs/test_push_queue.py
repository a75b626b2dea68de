"""A request never waits for its own push: its events go to the push queue (runs/push_queue.py) after commit.

One background thread pushes them and marks them published, a batch of marks at a time
(runs/push_marks.py); a push that fails or finds the queue full leaves `published_at`
null, and the drainer sends it later.
"""

import asyncio
import threading
import time
from datetime import timedelta

import pytest
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.utils import timezone

from runs import publish, push_marks, push_queue
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
def test_a_push_that_finds_the_queue_full_is_left_to_the_drainer(api, redis_layer, monkeypatch, drain_now):
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
    rounds, settled = [], []

    def handler(items):
        rounds.append(items)
        if items == ["broken"]:
            raise RuntimeError("the database went away mid-round")

    queue = PushQueue(handler, settle=lambda forced, idle: settled.append(forced), name="test-push")
    assert queue.put("broken", 1)
    assert queue.flush(PUSH_SECONDS)
    assert settled[-1] is True  # the flush had the round settled at once
    assert queue.put("next", 1)
    assert queue.flush(PUSH_SECONDS)

    assert rounds == [["broken"], ["next"]]
    assert settled[-1] is True


def test_the_push_thread_settles_again_when_asked_to_and_no_sooner():
    calls, again = [], threading.Event()

    def settle(forced, idle):
        calls.append(forced)
        if len(calls) == 1:
            return 0.05  # marks waiting: call again in 50 ms
        again.set()
        return None

    queue = PushQueue(lambda items: None, settle=settle, name="test-push")
    assert queue.put("round", 1)
    assert again.wait(PUSH_SECONDS)  # woken by its own timer: nothing else came
    assert calls == [False, False]


def test_a_flush_settles_what_would_have_waited():
    calls = []

    def settle(forced, idle):
        calls.append(forced)
        return None if forced else 3600  # not due for an hour, unless forced

    queue = PushQueue(lambda items: None, settle=settle, name="test-push")
    assert queue.put("round", 1)
    assert queue.flush(PUSH_SECONDS)
    assert calls[-1] is True


def test_a_busy_queue_still_settles_after_each_round_and_lets_go_only_when_dry():
    # Under steady load the queue may never run dry: marks due must not wait for it.
    calls = []
    queue = PushQueue(lambda items: items == ["first"] and queue.put("second", 1),
                      settle=lambda forced, idle: calls.append(idle), name="test-push")
    assert queue.put("first", 1)
    assert queue.flush(PUSH_SECONDS)
    assert calls[0] is False  # after the first round, the second already queued
    assert calls[-1] is True


def test_a_flush_with_nothing_ever_queued_returns_at_once():
    assert PushQueue(lambda items: None, settle=lambda forced, idle: None, name="test-push").flush(timeout=0)


def test_pushes_queued_during_a_round_share_the_next_one():
    started, release, rounds = threading.Event(), threading.Event(), []

    def handler(items):
        rounds.append(items)
        started.set()
        release.wait(PUSH_SECONDS)

    queue = PushQueue(handler, settle=lambda forced, idle: None, name="test-push")
    queue.put("first", 1)
    assert started.wait(PUSH_SECONDS)
    for item in ("a", "b", "c"):
        assert queue.put(item, 2)
    release.set()
    assert queue.flush(PUSH_SECONDS)

    assert rounds == [["first"], ["a", "b", "c"]]  # one stale-card read and one Redis question for the three


def test_the_queue_refuses_what_would_pass_max_queued(monkeypatch):
    monkeypatch.setattr(push_queue, "MAX_QUEUED", 3)
    release = threading.Event()
    queue = PushQueue(lambda items: release.wait(PUSH_SECONDS), settle=lambda forced, idle: None, name="test-push")

    assert queue.put("two events", 2)
    assert not queue.put("two more", 2)  # still counted while its round is being pushed
    assert queue.put("one more", 1)
    release.set()
    assert queue.flush(PUSH_SECONDS)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_push_thread_writes_the_marks_of_several_rounds_at_once(api, redis_layer, monkeypatch):
    runs = [make_run(api, "pending") for _ in range(2)]
    assert flush(PUSH_SECONDS)
    monkeypatch.setattr(push_marks, "MARK_AFTER_SECONDS", 3600)  # due only when flushed
    marks, real_mark = [], publish.mark_published
    monkeypatch.setattr(publish, "mark_published", lambda ids: (marks.append(sorted(ids)), real_mark(ids)))
    pushed = publish_stats["published"]

    for run in runs:
        assert transition(api, run["id"], "executing").status_code == 200
    deadline = time.monotonic() + PUSH_SECONDS
    while publish_stats["published"] < pushed + 2 and time.monotonic() < deadline:
        time.sleep(0.01)

    assert publish_stats["published"] == pushed + 2  # both pushed...
    assert marks == [] and all(transitioned(run).published_at is None for run in runs)  # ...marks waiting
    assert flush(PUSH_SECONDS)
    assert marks == [sorted(transitioned(run).pk for run in runs)]  # one statement for both
    assert all(transitioned(run).published_at is not None for run in runs)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_drainer_leaves_alone_an_event_whose_mark_may_be_on_its_way(api, redis_layer, monkeypatch):
    run = make_run(api, "pending")
    assert flush(PUSH_SECONDS)
    monkeypatch.setattr(push_queue, "MAX_QUEUED", 0)  # this push is never tried: only the drainer sends it
    assert transition(api, run["id"], "executing").status_code == 200

    assert drain() == 0  # too young: a push thread may be about to mark it
    assert transitioned(run).published_at is None
    RunEvent.objects.filter(pk=transitioned(run).pk).update(
        created_at=timezone.now() - timedelta(seconds=push_marks.DRAIN_AFTER_SECONDS + 1))
    assert drain() == 1
    assert transitioned(run).published_at is not None
