"""The inbox snapshot in pages over the real consumer (issue 11): the first page on
connect, each next one on request, every frame under 256 KB, the reviewer's standing
and wards read again for every page, and a total that follows the pushes.
"""

import json
from contextlib import asynccontextmanager

import pytest
from django.contrib.auth.models import User

from approvals.models import ReviewTeam
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.bulk import pending_cards_in_bulk
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run
from tests.live.sockets import (
    PUSH_TIMEOUT,
    all_pages,
    connected_inbox,
    in_event_loop,
    inbox_socket,
    next_message,
    pong_is_next,
    sync,
)

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("fresh_channel_layer"),
]


@asynccontextmanager
async def first_page(user):
    """A reviewer's inbox socket and its snapshot, the pages after it left to the test."""
    socket = await inbox_socket(user)
    connected, code = await socket.connect(timeout=PUSH_TIMEOUT)
    assert connected, code
    try:
        snapshot = await next_message(socket)
        assert snapshot["type"] == "snapshot"
        yield socket, snapshot
    finally:
        await socket.disconnect()


async def ask(socket, cursor) -> dict:
    await socket.send_json_to({"type": "page", "cursor": cursor})
    return await next_message(socket)


@in_event_loop
async def test_the_snapshot_is_a_first_page_and_the_rest_come_on_request(ward_agent, rita):
    made = await sync(pending_cards_in_bulk, ward_agent, 250, escalate_every=7)
    async with first_page(rita) as (socket, snapshot):
        assert (len(snapshot["cards"]), snapshot["total"]) == (100, 250)
        assert snapshot["cards"][0]["escalated_at"] is not None
        assert await pong_is_next(socket)  # nothing more until the page asks
        second = await ask(socket, snapshot["cursor"])
        assert (second["type"], second["after"], len(second["cards"]), second["total"]) == (
            "page",
            snapshot["cursor"],
            100,
            250,
        )
        rest = await all_pages(socket, second)
    sent = [card["id"] for card in snapshot["cards"] + rest]
    assert len(sent) == len(set(sent)) == 250
    assert set(sent) == {str(a.pk) for a in made}


@in_event_loop
async def test_no_frame_is_over_256_kb(ward_agent, rita, settings):
    settings.CONDOR_CARD_ARGS_MAX_BYTES = 64 * 1024
    await sync(pending_cards_in_bulk, ward_agent, 40, args={"note": "x" * 30_000})
    socket = await inbox_socket(rita)
    assert (await socket.connect(timeout=PUSH_TIMEOUT))[0]
    try:
        frames = [json.loads(await socket.receive_from(timeout=PUSH_TIMEOUT))]
        sizes = [len(json.dumps(frames[0]).encode())]
        while frames[-1]["cursor"] is not None:
            await socket.send_json_to({"type": "page", "cursor": frames[-1]["cursor"]})
            text = await socket.receive_from(timeout=PUSH_TIMEOUT)
            sizes.append(len(text.encode()))
            frames.append(json.loads(text))
    finally:
        await socket.disconnect()
    assert len(frames) >= 5
    assert max(sizes) <= 256 * 1024
    assert sum(len(frame["cards"]) for frame in frames) == 40


@in_event_loop
async def test_a_bad_page_request_gets_an_error_frame_and_the_socket_goes_on(ward_agent, rita):
    await sync(pending_cards_in_bulk, ward_agent, 150)
    async with first_page(rita) as (socket, snapshot):
        for cursor in ["forged", None, 7, snapshot["cursor"][:-2]]:
            error = await ask(socket, cursor)
            assert (error["type"], error["error"]) == ("error", "invalid_cursor"), error
            assert error["detail"]
        following = await ask(socket, snapshot["cursor"])
        assert (following["type"], len(following["cards"]), following["total"]) == ("page", 50, 150)


@in_event_loop
async def test_a_reviewer_taken_off_a_team_mid_paging_gets_no_more_of_its_cards(ward_agent, rita):
    def wards():
        ReviewTeam.objects.create(name="ICU", care_units=["ICU"]).members.set([rita])
        ReviewTeam.objects.create(name="Cardiology", care_units=["CARDIO"]).members.set([rita])
        pending_cards_in_bulk(ward_agent, 150, care_unit="ICU")
        pending_cards_in_bulk(ward_agent, 150, care_unit="CARDIO")

    await sync(wards)
    async with first_page(rita) as (socket, snapshot):
        assert snapshot["total"] == 300
        await sync(lambda: ReviewTeam.objects.get(name="ICU").members.remove(rita))
        resent = await next_message(socket)  # a team edit has the socket send its snapshot again
        assert (resent["type"], resent["total"]) == ("snapshot", 150)
        following = await ask(socket, snapshot["cursor"])  # the page that was next before the edit
        rest = await all_pages(socket, following)
    assert following["total"] == 150
    assert {card["session"]["care_unit"] for card in rest} == {"CARDIO"}


@in_event_loop
async def test_a_reviewer_who_lost_the_role_gets_no_next_page(ward_agent, rita):
    await sync(pending_cards_in_bulk, ward_agent, 150)
    async with first_page(rita) as (socket, snapshot):
        # Straight through the table, so no signal tells the socket: the page request itself must check.
        await sync(lambda: User.groups.through.objects.filter(user=rita, group__name="reviewers").delete())
        await socket.send_json_to({"type": "page", "cursor": snapshot["cursor"]})
        assert await socket.receive_output(timeout=PUSH_TIMEOUT) == {"type": "websocket.close", "code": 4403}


@in_event_loop
async def test_pushes_while_paging_carry_the_total(ward_agent, api, rita):
    await sync(pending_cards_in_bulk, ward_agent, 150)
    async with connected_inbox(rita) as (socket, cards):
        assert len(cards) == 150
        approval = await sync(suspend, api, await sync(open_executing_run, api))
        added = await next_message(socket)
        assert (added["type"], added["card"]["id"], added["total"]) == ("card.added", approval["id"], 151)
        await sync(approve, await sync(logged_in, rita), cards[-1]["id"])
        removed = await next_message(socket)
        assert (removed["type"], removed["id"], removed["total"]) == ("card.removed", cards[-1]["id"], 150)
