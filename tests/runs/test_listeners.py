"""A push goes only to the groups someone says they listen to (runs/listeners.py); nobody listening, it is done.

The stream and the inbox socket mark their group once they have joined it, before they
read what they show; a push asks after its commit.
"""

from datetime import timedelta

import pytest
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from runs import listeners
from runs.listeners import Listening
from runs.models import RunEvent
from runs.publish import DRAIN_AFTER_SECONDS, INBOX_GROUP, drain, run_group
from runs.stream_news import RunNews
from tests.helpers.runs import make_run, transition

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="the marks live in Redis"),
]


def forget(group: str) -> None:
    """No mark on `group`, whoever marked it earlier in this test run."""
    redis.Redis.from_url(settings.REDIS_URL).delete(listeners.group_key(group))


@pytest.fixture
def sends(monkeypatch) -> list[str]:
    """The groups the channel layer is asked to send to."""
    layer = get_channel_layer()
    sent, real_send = [], layer.group_send

    async def recording_send(group, message):
        sent.append(group)
        await real_send(group, message)

    monkeypatch.setattr(layer, "group_send", recording_send)
    return sent


def test_a_push_to_a_run_nobody_streams_sends_nothing(api, sends):
    run = make_run(api, "pending")

    transition(api, run["id"], "executing")

    assert sends == []
    # Nothing to push, ever: the mark alone is missing, and the drainer writes it in bulk.
    assert RunEvent.objects.get(run_id=run["id"], kind="run.transitioned").published_at is None


def test_the_drainer_marks_what_nobody_listened_to_without_sending_it(api, sends):
    run = make_run(api, "pending")
    transition(api, run["id"], "executing")
    events = RunEvent.objects.filter(run_id=run["id"])
    events.update(created_at=timezone.now() - timedelta(seconds=DRAIN_AFTER_SECONDS + 1))  # the drainer's now

    assert drain() == 2  # the run's opening and its transition

    assert sends == []
    assert not events.filter(published_at__isnull=True).exists()


def test_the_drainer_leaves_young_events_alone(api, sends):
    run = make_run(api, "pending")
    async_to_sync(Listening(run_group(run["id"])).mark)()  # its opening unmarked, and now listened to

    assert drain() == 0

    assert sends == []  # as far as the drainer knows, that push may still be on its way
    assert RunEvent.objects.get(run_id=run["id"]).published_at is None


def test_a_push_to_a_streamed_run_goes_to_its_group(api, sends):
    run = make_run(api, "pending")
    async_to_sync(Listening(run_group(run["id"])).mark)()

    transition(api, run["id"], "executing")

    assert sends == [run_group(run["id"])]
    assert RunEvent.objects.get(run_id=run["id"], kind="run.transitioned").published_at is not None


def test_a_stream_marks_its_run_once_it_has_joined():
    group = run_group("6f1c1b7e-2f0a-4a8e-9d0c-6a1c2b3d4e5f")
    forget(group)
    news = RunNews("6f1c1b7e-2f0a-4a8e-9d0c-6a1c2b3d4e5f")

    async def join_and_leave():
        await news.join()
        await news.leave()

    async_to_sync(join_and_leave)()
    assert listeners.listened({group, "run.nobody"}) == {group}


def test_a_mark_is_renewed_only_when_it_is_due(monkeypatch):
    group = run_group("renewed")
    listening = Listening(group)
    async_to_sync(listening.mark)()
    forget(group)

    async_to_sync(listening.renew)()
    assert listeners.listened({group}) == set()  # marked a moment ago: not yet

    monkeypatch.setattr(listeners, "RENEW_EVERY_SECONDS", 0)
    async_to_sync(listening.renew)()
    assert listeners.listened({group}) == {group}


def test_a_redis_that_cannot_answer_counts_every_group_as_listened():
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        assert listeners.listened({INBOX_GROUP, run_group("any")}) == {INBOX_GROUP, run_group("any")}


def test_without_redis_every_group_counts_as_listened():
    with override_settings(REDIS_URL=None):
        assert listeners.listened({INBOX_GROUP}) == {INBOX_GROUP}


def test_a_listener_that_cannot_mark_its_group_is_told():
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"), pytest.raises(redis.RedisError):
        async_to_sync(Listening(INBOX_GROUP).mark)()
