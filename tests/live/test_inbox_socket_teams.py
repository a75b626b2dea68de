"""Review teams on the inbox websocket: the snapshot and every push follow the reviewer's wards.

Every socket is in the one inbox group and drops what its reviewer may not see
(approvals/visibility.py explains why not per-team groups), with the teams read
fresh for each push, so a team edit applies to open sockets at once.
"""

from types import SimpleNamespace

import pytest
from django.db import transaction

from approvals.models import ReviewTeam
from inbox import consumers
from runs.models import Run
from tests.helpers.approval_loop import approve, suspend
from tests.helpers.http import post_json
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run
from tests.live.sockets import connected_inbox, in_event_loop, next_message, pong_is_next, sync

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("fresh_channel_layer"),
]


def wards(rita, rob) -> None:
    ReviewTeam.objects.create(name="ICU", care_units=["ICU"]).members.set([rita])
    ReviewTeam.objects.create(name="Cardiology", care_units=["CARDIO"]).members.set([rob])


def park_in(api, care_unit: str) -> dict:
    return suspend(api, open_executing_run(api, care_unit=care_unit))


@in_event_loop
async def test_the_snapshot_holds_only_the_reviewers_wards(rita, rob, api):
    await sync(wards, rita, rob)
    icu = await sync(park_in, api, "ICU")
    await sync(park_in, api, "CARDIO")
    async with connected_inbox(rita) as (_, cards):
        assert [card["id"] for card in cards] == [icu["id"]]


@in_event_loop
async def test_a_card_is_pushed_only_to_its_wards_reviewers(rita, rob, api):
    await sync(wards, rita, rob)
    async with connected_inbox(rita) as (ritas, _), connected_inbox(rob) as (robs, _):
        icu = await sync(park_in, api, "ICU")
        added = await next_message(ritas)
        assert (added["type"], added["card"]["id"]) == ("card.added", icu["id"])
        assert await pong_is_next(robs)


@in_event_loop
async def test_claims_and_decisions_of_an_invisible_card_are_not_pushed(rita, rob, api):
    await sync(wards, rita, rob)
    async with connected_inbox(rita) as (ritas, _), connected_inbox(rob) as (robs, _):
        icu = await sync(park_in, api, "ICU")
        await next_message(ritas)
        await sync(approve, await sync(logged_in, rita), icu["id"])
        removed = await next_message(ritas)
        assert (removed["type"], removed["id"]) == ("card.removed", icu["id"])
        assert await pong_is_next(robs)


@in_event_loop
async def test_joining_a_team_applies_to_an_open_socket(rita, rob, api):
    await sync(wards, rita, rob)
    async with connected_inbox(rob) as (robs, _):
        await sync(lambda: ReviewTeam.objects.get(name="ICU").members.add(rob))
        assert (await next_message(robs))["type"] == "snapshot"  # the team edit's resync
        icu = await sync(park_in, api, "ICU")
        added = await next_message(robs)
        assert added["card"]["id"] == icu["id"]


@in_event_loop
async def test_a_team_edit_brings_the_cards_already_waiting_to_an_open_inbox(rita, rob, api):
    await sync(wards, rita, rob)
    icu = await sync(park_in, api, "ICU")
    async with connected_inbox(rob) as (robs, cards):
        assert cards == []
        await sync(lambda: ReviewTeam.objects.get(name="ICU").members.add(rob))
        snapshot = await next_message(robs)
        assert (snapshot["type"], [card["id"] for card in snapshot["cards"]]) == ("snapshot", [icu["id"]])


@in_event_loop
async def test_leaving_a_team_takes_its_cards_out_of_an_open_inbox(rita, rob, api):
    await sync(wards, rita, rob)
    await sync(park_in, api, "ICU")
    async with connected_inbox(rita) as (ritas, cards):
        assert len(cards) == 1
        await sync(lambda: ReviewTeam.objects.get(name="ICU").members.remove(rita))
        snapshot = await next_message(ritas)
        assert (snapshot["type"], snapshot["cards"], snapshot["total"]) == ("snapshot", [], 0)


@in_event_loop
async def test_a_session_moved_to_another_unit_moves_its_cards_between_open_inboxes(rita, rob, api):
    await sync(wards, rita, rob)
    icu = await sync(park_in, api, "ICU")
    async with connected_inbox(rita) as (ritas, _), connected_inbox(rob) as (robs, _):
        moved = await sync(api.patch, f"/api/v1/sessions/{icu['session']}/", {"care_unit": "CARDIO"}, format="json")
        assert moved.status_code == 200, moved.content
        left, reached = await next_message(ritas), await next_message(robs)
        assert (left["type"], left["cards"]) == ("snapshot", [])
        assert (reached["type"], [card["id"] for card in reached["cards"]]) == ("snapshot", [icu["id"]])


def edit_in_a_burst(team, member) -> None:
    """Six edits whose resyncs all leave at one commit: they reach the socket together, however slow the edits."""
    with transaction.atomic():
        for _ in range(3):  # joins and leaves
            team.members.add(member)
            team.members.remove(member)
        team.members.add(member)


@in_event_loop
async def test_a_claim_voided_by_a_move_reaches_the_new_wards_inbox_unclaimed(rita, rob, api):
    await sync(wards, rita, rob)
    icu = await sync(park_in, api, "ICU")
    claimed = await sync(post_json, await sync(logged_in, rita), f"/api/v1/approvals/{icu['id']}/claim/", {})
    assert claimed.status_code == 200
    async with connected_inbox(rob) as (robs, _):
        moved = await sync(api.patch, f"/api/v1/sessions/{icu['session']}/", {"care_unit": "CARDIO"}, format="json")
        assert moved.status_code == 200, moved.content
        # The resync and the void's own push, in either order: both show the card free to take.
        pushes = [await next_message(robs), await next_message(robs)]
    by_type = {push["type"]: push for push in pushes}
    assert set(by_type) == {"snapshot", "card.updated"}
    assert [(card["id"], card["claimed_by"]) for card in by_type["snapshot"]["cards"]] == [(icu["id"], None)]
    assert (by_type["card.updated"]["card"]["id"], by_type["card.updated"]["card"]["claimed_by"]) == (icu["id"], None)


@in_event_loop
async def test_a_burst_of_team_edits_is_one_snapshot_now_and_one_at_the_windows_end(rita, rob, api, monkeypatch):
    # The socket's clock stands still: however long the first snapshot takes to read, the
    # resyncs behind it fall in its window, and only the window's end sends one more.
    monkeypatch.setattr(consumers, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    await sync(wards, rita, rob)
    icu = await sync(park_in, api, "ICU")
    async with connected_inbox(rob) as (robs, _):
        team = await sync(ReviewTeam.objects.get, name="ICU")
        await sync(edit_in_a_burst, team, rob)
        first, last = await next_message(robs), await next_message(robs)
        assert (first["type"], last["type"]) == ("snapshot", "snapshot")
        assert [card["id"] for card in last["cards"]] == [icu["id"]]  # the scope as it was at the end
        assert await pong_is_next(robs)


@in_event_loop
async def test_moving_a_session_without_open_cards_resends_nothing(rita, rob, api):
    await sync(wards, rita, rob)
    run_id = await sync(open_executing_run, api, care_unit="ICU")
    session = await sync(lambda: str(Run.objects.get(pk=run_id).session_id))
    async with connected_inbox(rob) as (robs, _):
        await sync(api.patch, f"/api/v1/sessions/{session}/", {"care_unit": "CARDIO"}, format="json")
        assert await pong_is_next(robs)
