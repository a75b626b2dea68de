"""Pushes go only to the runs someone streams (runs/publish._push: one Redis round trip a batch finds who
listens), from a request and from a sweep batch alike; a sweep waits for its push (so pushes never pile up
behind the closes)."""

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone

from runs import publish
from runs import sweep as sweeps
from runs.models import Run, RunEvent
from runs.publish import flush, publish_stats, run_group
from tests.helpers.approval_loop import CHART_READ, gate
from tests.helpers.runs import make_run

pytestmark = pytest.mark.usefixtures("catalog")


@pytest.fixture
def layer():
    layer = get_channel_layer()
    if not publish._knows_listeners(layer):
        pytest.skip("asking Redis who listens needs REDIS_URL (CI sets it)")
    return layer


def make_idle(api, count: int) -> list[str]:
    ids = [make_run(api, "executing")["id"] for _ in range(count)]
    Run.objects.filter(pk__in=ids).update(last_activity_at=timezone.now() - timedelta(hours=1))
    return ids


def listen(layer, run_id) -> str:
    async def join():
        channel = await layer.new_channel()
        await layer.group_add(run_group(run_id), channel)
        return channel
    return async_to_sync(join)()


def counted_sends(layer, monkeypatch) -> list[str]:
    sent, real_send = [], layer.group_send

    async def counted(group, message):
        sent.append(group)
        await real_send(group, message)

    monkeypatch.setattr(layer, "group_send", counted)
    return sent


def closed_events(runs):
    return RunEvent.objects.filter(run_id__in=runs, kind="run.closed")


def test_a_sweep_batch_pushes_only_to_the_runs_someone_streams(api, layer, monkeypatch,
                                                                 django_capture_on_commit_callbacks):
    runs = make_idle(api, 3)
    channel = listen(layer, runs[0])
    sent = counted_sends(layer, monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        assert sweeps.abort_idle_runs(timezone.now()) == 3

    assert sent == [run_group(runs[0])]  # nobody streams the other two: no push for them
    assert not closed_events(runs).filter(published_at__isnull=True).exists()  # yet none is left for the drainer
    async def receive():
        return await asyncio.wait_for(layer.receive(channel), timeout=5)

    message = async_to_sync(receive)()
    assert (message["event_id"], message["terminal"]) == (closed_events(runs[:1]).get().pk, True)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_slow_push_is_waited_for_not_left_behind(api, layer, monkeypatch):
    # Committed for real: the sweep's hook runs as in production, not under a test's transaction.
    runs = make_idle(api, 2)
    listen(layer, runs[1])
    real_send = layer.group_send

    async def slow(group, message):
        await asyncio.sleep(0.3)
        await real_send(group, message)

    monkeypatch.setattr(layer, "group_send", slow)
    sweeps.abort_idle_runs(timezone.now())

    # Marked as the sweep returns: its push was not handed to the push queue (runs/push_queue.py).
    assert not closed_events(runs).filter(published_at__isnull=True).exists()


def test_a_stuck_publisher_leaves_the_batch_to_the_drainer(api, layer, monkeypatch, django_capture_on_commit_callbacks):
    runs = make_idle(api, 2)
    listen(layer, runs[0])  # someone to push to: the publisher is needed
    monkeypatch.setattr(publish, "MAX_IN_FLIGHT", 0)  # every slot held by pushes stuck in Redis
    skipped_before = publish_stats["skipped"]

    with django_capture_on_commit_callbacks(execute=True):
        sweeps.abort_idle_runs(timezone.now())

    assert publish_stats["skipped"] == skipped_before + 2
    assert closed_events(runs).filter(published_at__isnull=True).count() == 2


def test_a_batch_nobody_listens_to_needs_no_publisher(api, layer, monkeypatch, django_capture_on_commit_callbacks):
    runs = make_idle(api, 2)
    monkeypatch.setattr(publish, "MAX_IN_FLIGHT", 0)  # the publisher loop could take nothing

    with django_capture_on_commit_callbacks(execute=True):
        sweeps.abort_idle_runs(timezone.now())

    assert not closed_events(runs).filter(published_at__isnull=True).exists()  # asked who listens, on this thread


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_requests_push_wakes_only_a_streamed_run(api, layer, monkeypatch):
    # Committed for real: the push goes through the push thread, as a request's does in production.
    streamed, unstreamed = make_run(api, "executing")["id"], make_run(api, "executing")["id"]
    channel = listen(layer, streamed)
    flush()
    sent = counted_sends(layer, monkeypatch)

    for run_id in (unstreamed, streamed):
        assert gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ).status_code == 200
    assert flush(timeout=10)

    assert sent == [run_group(streamed)]
    allowed = RunEvent.objects.filter(run_id__in=[streamed, unstreamed], kind="tool.allow")
    assert allowed.count() == 2 and not allowed.filter(published_at__isnull=True).exists()  # none left for the drainer

    async def receive():
        return await asyncio.wait_for(layer.receive(channel), timeout=5)

    assert async_to_sync(receive)()["event_id"] == allowed.get(run_id=streamed).pk


def test_a_card_reaches_the_inbox_only_while_someone_has_it_open(api, layer, monkeypatch,
                                                                 django_capture_on_commit_callbacks):
    from runs.publish import INBOX_GROUP
    from tests.helpers.approval_loop import park

    async def inbox_members(add: bool):
        key = layer._group_key(INBOX_GROUP)
        redis = layer.connection(layer.consistent_hash(INBOX_GROUP))
        if add:
            await layer.group_add(INBOX_GROUP, await layer.new_channel())
        else:
            await redis.delete(key)  # what an earlier test's sockets left behind: none of them is open now

    run_id = make_run(api, "executing")["id"]
    async_to_sync(inbox_members)(False)
    sent = counted_sends(layer, monkeypatch)
    stale_checks, real_stale_cards = [], publish._stale_cards
    monkeypatch.setattr(publish, "_stale_cards", lambda pushes: stale_checks.append(pushes) or real_stale_cards(pushes))
    with django_capture_on_commit_callbacks(execute=True):
        first = park(api, run_id)
    assert INBOX_GROUP not in sent  # no reviewer has the inbox open
    assert stale_checks == []  # so no card was checked for staleness either
    parked = RunEvent.objects.get(run_id=run_id, kind="approval.suspended")
    assert parked.published_at is not None  # nothing left for the drainer

    async_to_sync(inbox_members)(True)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            second = park(api, run_id, args={"drug": "ibuprofen", "dose": "200 mg", "route": "oral", "days": 3})
    finally:
        async_to_sync(inbox_members)(False)
    assert first["id"] != second["id"] and sent.count(INBOX_GROUP) == 1
    assert len(stale_checks) == 1  # with the inbox open, its card was checked before it went
