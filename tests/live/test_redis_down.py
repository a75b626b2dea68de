"""Redis down: the suspend still parks the run and is persisted; the inbox catches up afterwards.

"Down" is the channel layer pointed at a closed port, for the whole process, the
way an outage looks: connection refused on every push.
"""

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from approvals.models import Approval, ApprovalStatus
from runs.listeners import Listening
from runs.models import RunEvent
from runs.publish import drain, publish_stats, run_group
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.runs import open_executing_run, run_state
from tests.live.sockets import connected_inbox, in_event_loop, next_message, pong_is_next, sync

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("fresh_channel_layer", "drain_now"),
]

CLOSED_PORT_LAYER = {
    "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": ["redis://127.0.0.1:1"]}}
}


def redis_down():
    # Channels drops its cached layer objects when CHANNEL_LAYERS changes (both ways).
    return override_settings(CHANNEL_LAYERS=CLOSED_PORT_LAYER)


def suspend_during_outage(api) -> tuple[str, dict]:
    """A suspend in a run someone streams, so its push is tried (and fails) before the request answers."""
    with redis_down():
        run_id = open_executing_run(api)
        async_to_sync(Listening(run_group(run_id)).mark)()  # its cache is not the channel layer
        approval = suspend(api, run_id)  # asserts the 202
    return run_id, approval


def suspend_event(approval) -> RunEvent:
    return RunEvent.objects.get(kind="approval.suspended", data__approval_id=approval["id"])


def test_a_suspend_still_parks_the_run_and_is_persisted(api):
    failed_before = publish_stats["failed"]
    run_id, approval = suspend_during_outage(api)
    assert run_state(run_id) == ("suspended", "")
    assert Approval.objects.get(pk=approval["id"]).status == ApprovalStatus.PENDING
    assert suspend_event(approval).published_at is None  # left for the drainer
    assert publish_stats["failed"] > failed_before


@in_event_loop
async def test_the_card_is_in_the_snapshot_once_the_inbox_reconnects(api, rita):
    _, approval = await sync(suspend_during_outage, api)
    async with connected_inbox(rita) as (_, cards):
        assert [card["id"] for card in cards] == [approval["id"]]


@in_event_loop
async def test_the_drainer_delivers_the_missed_card_to_an_open_inbox(api, rita):
    async with connected_inbox(rita) as (socket, cards):
        assert cards == []
        _, approval = await sync(suspend_during_outage, api)
        assert await pong_is_next(socket)  # nothing went out during the outage

        assert await sync(drain, limit=100) >= 1
        message = await next_message(socket)
    assert (message["type"], message["card"]["id"]) == ("card.added", approval["id"])
    assert (await sync(suspend_event, approval)).published_at is not None


def test_the_drainer_publishes_oldest_first_and_marks_what_went_out(api):
    suspend_during_outage(api)
    suspend_during_outage(api)
    missed = list(RunEvent.objects.filter(published_at__isnull=True).order_by("id").values_list("pk", flat=True))
    assert len(missed) >= 2

    assert drain(limit=1) == 1
    assert list(RunEvent.objects.filter(published_at__isnull=True).values_list("pk", flat=True)) == missed[1:]
    assert drain(limit=100) == len(missed) - 1
    assert not RunEvent.objects.filter(published_at__isnull=True).exists()


def test_the_drainer_leaves_events_unpublished_while_redis_is_still_down(api):
    _, approval = suspend_during_outage(api)
    with redis_down():
        drain(limit=100)
    assert suspend_event(approval).published_at is None


@in_event_loop
async def test_a_card_decided_before_the_drainer_caught_up_does_not_come_back(api, rita, reviewer_http):
    _, approval = await sync(suspend_during_outage, api)
    async with connected_inbox(rita) as (socket, cards):
        assert [card["id"] for card in cards] == [approval["id"]]
        await sync(approve, reviewer_http, approval["id"])
        assert (await next_message(socket))["type"] == "card.removed"

        await sync(drain, limit=100)  # re-publishes the stale card.added
        assert await pong_is_next(socket), "a decided card reappeared in the inbox"


def test_the_polling_snapshot_serves_the_card_while_redis_is_down(api, reviewer_http):
    _, approval = suspend_during_outage(api)
    with redis_down():
        response = reviewer_http.get("/api/v1/inbox/cards/")
    assert response.status_code == 200
    assert [card["id"] for card in response.json()["cards"]] == [approval["id"]]
