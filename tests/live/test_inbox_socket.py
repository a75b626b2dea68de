"""The reviewers' inbox over /ws/inbox/: who may connect, the snapshot, and every push after it.

Changes are made through the real API (agent key, reviewer session with CSRF) so
each push comes from the outbox after commit, as in production.
"""

import pytest
import redis
from django.conf import settings

from approvals.expiry import expire_due
from approvals.models import Approval
from runs import listeners
from runs.models import RunEvent
from runs.publish import INBOX_GROUP, publish
from tests.helpers.approval_loop import approve, clarify, decide, parked_run, resume
from tests.helpers.clock import later
from tests.helpers.runs import open_executing_run, open_run
from tests.live.sockets import (
    connected_inbox,
    in_event_loop,
    next_message,
    pong_is_next,
    refused,
    sync,
)

# Publishing happens on commit, so these tests commit.
pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("fresh_channel_layer"),
]


# ------------------------------------------------------------------ who may connect


@in_event_loop
async def test_an_anonymous_socket_is_refused():
    assert await refused(None)


@in_event_loop
async def test_a_compliance_officer_is_refused(carl):
    assert await refused(carl)


@in_event_loop
async def test_a_socket_from_a_foreign_origin_is_refused(rita):
    assert await refused(rita, origin=b"https://evil.example")


@in_event_loop
async def test_a_reviewer_is_let_in(rita):
    assert not await refused(rita)


# ------------------------------------------------------------------ the snapshot


@in_event_loop
async def test_the_snapshot_holds_exactly_the_pending_cards(api, rita, reviewer_http):
    _, waiting = await sync(parked_run, api)
    _, approved = await sync(parked_run, api)
    await sync(approve, reviewer_http, approved["id"])
    _, overdue = await sync(parked_run, api)
    # Past its deadline but not yet swept: expiry never depends on the sweep having run.
    await sync(Approval.objects.filter(pk=overdue["id"]).update, expires_at=later(-1))

    async with connected_inbox(rita) as (_, cards):
        assert [card["id"] for card in cards] == [waiting["id"]]
        (card,) = cards
        assert (card["status"], card["tool"], card["client"]) == (
            "pending",
            "prescribe_medication",
            {"name": "ward-agent"},
        )
        assert card["args"] == waiting["args"]


@in_event_loop
async def test_a_clarification_card_carries_its_form(api, rita):
    run_id = await sync(open_executing_run, api)
    asked = await sync(clarify, api, run_id, [{"name": "route", "hint": {"enum": ["oral", "iv"]}}])
    assert asked.status_code == 202, asked.content

    async with connected_inbox(rita) as (_, cards):
        (card,) = cards
    assert card["reason_code"] == "clarification"
    assert card["message"] == "Which route should the antibiotic take?"
    assert "route" in card["resume_schema"]["properties"]


# ------------------------------------------------------------------ pushes


def unmark_the_inbox() -> None:
    """Drop the mark earlier sockets left on the inbox group (runs/listeners.py): a socket's own must do."""
    if settings.REDIS_URL:
        redis.Redis.from_url(settings.REDIS_URL).delete(listeners.group_key(INBOX_GROUP))


@in_event_loop
async def test_a_suspend_pushes_the_card(api, rita):
    await sync(unmark_the_inbox)
    async with connected_inbox(rita) as (socket, cards):
        assert cards == []
        _, approval = await sync(parked_run, api)
        message = await next_message(socket)
    assert message["type"] == "card.added"
    assert (message["card"]["id"], message["card"]["status"]) == (approval["id"], "pending")


@in_event_loop
async def test_an_approval_pushes_the_removal_with_who_decided(api, rita, reviewer_http):
    _, approval = await sync(parked_run, api)
    async with connected_inbox(rita) as (socket, _):
        await sync(approve, reviewer_http, approval["id"])
        message = await next_message(socket)
    assert message == {
        "type": "card.removed",
        "id": approval["id"],
        "status": "approved",
        "decided_by": "rita",
        "run_id": approval["run"],
        "tool": "prescribe_medication",
        "op": "create",
        "care_unit": "",
        "total": 0,
    }


@in_event_loop
async def test_a_rejection_pushes_the_removal(api, rita, reviewer_http):
    _, approval = await sync(parked_run, api)
    async with connected_inbox(rita) as (socket, _):
        answer = await sync(decide, reviewer_http, approval["id"], {"approved": False, "reason": "Allergy."})
        assert answer.status_code == 200, answer.content
        message = await next_message(socket)
    assert (message["type"], message["id"], message["status"]) == ("card.removed", approval["id"], "rejected")


@in_event_loop
async def test_a_consumed_approval_is_removed(api, rita, reviewer_http):
    run_id, approval = await sync(parked_run, api)
    await sync(approve, reviewer_http, approval["id"])
    async with connected_inbox(rita) as (socket, _):
        assert (await sync(resume, api, run_id, approval["id"])).status_code == 200
        message = await next_message(socket)
    assert (message["type"], message["id"], message["status"]) == ("card.removed", approval["id"], "consumed")


@in_event_loop
async def test_an_expired_approval_is_removed(api, rita):
    _, approval = await sync(parked_run, api)
    async with connected_inbox(rita) as (socket, _):
        past_deadline = later(settings.CONDOR_APPROVAL_TTL_SECONDS + 1)
        assert await sync(expire_due, now=past_deadline) == 1
        message = await next_message(socket)
    assert message == {
        "type": "card.removed",
        "id": approval["id"],
        "status": "expired",
        "decided_by": None,
        "run_id": approval["run"],
        "tool": "prescribe_medication",
        "op": "create",
        "care_unit": "",
        "total": 0,
    }


@in_event_loop
async def test_a_card_withdrawn_by_a_new_run_is_removed_saying_so(api, rita):
    run_id, approval = await sync(parked_run, api)
    session_id = await sync(lambda: str(Approval.objects.get(pk=approval["id"]).session_id))
    async with connected_inbox(rita) as (socket, _):
        assert (await sync(open_run, api, session_id))["superseded_run"] == run_id
        message = await next_message(socket)
    assert message == {
        "type": "card.removed",
        "id": approval["id"],
        "status": "withdrawn",
        "decided_by": None,
        "run_id": run_id,
        "tool": "prescribe_medication",
        "op": "create",
        "care_unit": "",
        "cause": "superseded",
        "stopped_by": None,
        "total": 0,
    }


@in_event_loop
async def test_a_republished_event_reaches_a_socket_once(api, rita, reviewer_http):
    async with connected_inbox(rita) as (socket, _):
        run_id, approval = await sync(parked_run, api)
        assert (await next_message(socket))["type"] == "card.added"

        def publish_again():
            event = RunEvent.objects.get(run_id=run_id, kind="approval.suspended")
            RunEvent.objects.filter(pk=event.pk).update(published_at=None)
            return publish([event])  # what the drainer does after a crash before marking

        assert await sync(publish_again) == 1
        assert await pong_is_next(socket)
        # The socket is still live: the next fact arrives.
        await sync(approve, reviewer_http, approval["id"])
        assert (await next_message(socket))["type"] == "card.removed"


@in_event_loop
async def test_a_ping_is_answered(rita):
    async with connected_inbox(rita) as (socket, _):
        await socket.send_json_to({"type": "ping"})
        assert await next_message(socket) == {"type": "pong"}
