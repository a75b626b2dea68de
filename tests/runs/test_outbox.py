"""Persist, then publish: state and event commit together; pushing is after commit and best-effort."""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone

from approvals.models import Approval
from runs import outbox, spine
from runs.listeners import Listening
from runs.models import Run, RunEvent
from runs.publish import INBOX_GROUP, drain, publish_stats, run_group
from sessions_app.models import Session
from tests.helpers.approval_loop import park
from tests.helpers.runs import close, make_run, stored_state, transition


class LayerDown(Exception):
    pass


def _refuse_event(*events, **fields):
    raise RuntimeError("the outbox table is unavailable")


async def _listen(layer, group: str) -> str:
    """A listener on `group`, as the stream and the inbox listen: joined, and saying so (runs/listeners.py)."""
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    await Listening(group).mark()
    return channel


async def _next_message(layer, channel: str) -> dict:
    return await asyncio.wait_for(layer.receive(channel), timeout=5)


def test_every_state_change_writes_its_event(api):
    run = make_run(api, "pending")
    transition(api, run["id"], "executing")
    close(api, run["id"], "completed")

    events = RunEvent.objects.filter(run_id=run["id"])

    assert [(e.kind, e.data["state"]) for e in events] == [
        ("run.opened", "pending"),
        ("run.transitioned", "executing"),
        ("run.closed", "completed"),
    ]


def test_a_failed_event_write_rolls_back_the_transition(api, monkeypatch):
    run = make_run(api, "pending")
    monkeypatch.setattr(RunEvent.objects, "bulk_create", _refuse_event)  # every event write is one

    with pytest.raises(RuntimeError):
        spine.transition(run["id"], "planning")

    assert stored_state(run["id"]) == "pending"


def test_a_failed_event_write_rolls_back_the_close_and_its_expiries(api, monkeypatch):
    run = make_run(api, "executing")
    approval = park(api, run["id"])
    # A close writes its events (and its expiries') with one bulk INSERT.
    monkeypatch.setattr(RunEvent.objects, "bulk_create", _refuse_event)

    with pytest.raises(RuntimeError):
        spine.close(run["id"], "user_stopped")

    stored = Run.objects.get(pk=run["id"])
    assert (stored.state, stored.terminal_reason, stored.closed_at) == ("suspended", "", None)
    assert Approval.objects.get(pk=approval["id"]).status == "pending"


def test_a_failed_event_write_opens_nothing_and_supersedes_nothing(api, monkeypatch):
    old = make_run(api, "executing")
    monkeypatch.setattr(RunEvent.objects, "bulk_create", _refuse_event)  # every event write is one

    with pytest.raises(RuntimeError):
        spine.open_run(Session.objects.get(pk=old["session"]))

    assert [
        (str(pk), state) for pk, state in Run.objects.filter(session_id=old["session"]).values_list("pk", "state")
    ] == [(old["id"], "executing")]


def test_one_event_is_a_batch_of_one_written_and_pushed_after_commit(
    api, monkeypatch, django_capture_on_commit_callbacks
):
    run = Run.objects.get(pk=make_run(api, "pending")["id"])
    pushed = []
    monkeypatch.setattr(outbox, "publish", lambda events: pushed.append([e.pk for e in events]))

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        recorded = outbox.record_event(run, "run.noted", step_id="s1", data={"n": 1})
        assert pushed == []  # nothing leaves before the commit

    assert pushed == [[recorded.pk]]
    stored = RunEvent.objects.get(pk=recorded.pk)
    assert (stored.kind, stored.step_id, stored.data, stored.frames, stored.inbox) == (
        "run.noted",
        "s1",
        {"n": 1},
        [],
        None,
    )
    assert stored.created_at is not None


def test_events_are_published_only_after_commit(api, django_capture_on_commit_callbacks):
    run = make_run(api, "pending")
    async_to_sync(_listen)(get_channel_layer(), run_group(run["id"]))

    with django_capture_on_commit_callbacks() as callbacks:
        transition(api, run["id"], "planning")

    event = RunEvent.objects.get(run_id=run["id"], kind="run.transitioned")
    assert event.published_at is None
    assert len(callbacks) == 1
    callbacks[0]()
    event.refresh_from_db()
    assert event.published_at is not None


def test_a_working_layer_marks_the_event_published_and_reaches_the_run_group(api, django_capture_on_commit_callbacks):
    run = make_run(api, "pending")
    layer = get_channel_layer()
    channel = async_to_sync(_listen)(layer, run_group(run["id"]))
    before = publish_stats["published"]

    with django_capture_on_commit_callbacks(execute=True):
        transition(api, run["id"], "executing")

    event = RunEvent.objects.get(run_id=run["id"], kind="run.transitioned")
    assert event.published_at is not None
    assert publish_stats["published"] == before + 1
    message = async_to_sync(_next_message)(layer, channel)
    assert (message["type"], message["event_id"], message["terminal"]) == ("run.event", event.pk, False)


def test_a_suspend_reaches_the_reviewers_inbox_group(api, django_capture_on_commit_callbacks):
    run = make_run(api, "executing")
    layer = get_channel_layer()
    channel = async_to_sync(_listen)(layer, INBOX_GROUP)

    with django_capture_on_commit_callbacks(execute=True):
        approval = park(api, run["id"])

    event = RunEvent.objects.get(run_id=run["id"], kind="approval.suspended")
    message = async_to_sync(_next_message)(layer, channel)
    while message["event_id"] != event.pk:  # another test's card may be queued ahead of ours
        message = async_to_sync(_next_message)(layer, channel)
    assert message["type"] == "inbox.message"
    assert approval["id"] in str(message["message"])
    assert event.published_at is not None


def test_the_drainer_republishes_what_a_failing_layer_missed(
    api, monkeypatch, django_capture_on_commit_callbacks, drain_now
):
    run = make_run(api, "pending")
    layer = get_channel_layer()
    channel = async_to_sync(_listen)(layer, run_group(run["id"]))

    async def refuse(group, message):
        raise LayerDown("redis is gone")

    with monkeypatch.context() as outage, django_capture_on_commit_callbacks(execute=True):
        outage.setattr(layer, "group_send", refuse)
        transition(api, run["id"], "executing")
    event = RunEvent.objects.get(run_id=run["id"], kind="run.transitioned")
    assert event.published_at is None

    drain()

    # run.opened was never pushed either (this test's opening commit never ran its hooks)
    missed = list(RunEvent.objects.filter(run_id=run["id"]).values_list("pk", flat=True))
    assert RunEvent.objects.filter(run_id=run["id"], published_at__isnull=True).count() == 0
    received = [async_to_sync(_next_message)(layer, channel)["event_id"] for _ in missed]
    assert received == missed
    assert event.pk in received


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_failing_layer_never_fails_the_request_nor_rolls_back(api, monkeypatch):
    run = make_run(api, "pending")
    layer = get_channel_layer()
    async_to_sync(_listen)(layer, run_group(run["id"]))  # someone streams the run: its push is tried

    async def refuse(group, message):
        raise LayerDown("redis is gone")

    monkeypatch.setattr(layer, "group_send", refuse)
    failed_before = publish_stats["failed"]

    response = transition(api, run["id"], "executing")

    assert response.status_code == 200
    assert stored_state(run["id"]) == "executing"
    event = RunEvent.objects.get(run_id=run["id"], kind="run.transitioned")
    assert event.published_at is None
    assert publish_stats["failed"] == failed_before + 1


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_real_commit_has_pushed_and_marked_its_event_when_the_request_answers(api):
    run = make_run(api, "pending")
    layer = get_channel_layer()
    channel = async_to_sync(_listen)(layer, run_group(run["id"]))

    transition(api, run["id"], "executing")

    event = RunEvent.objects.get(run_id=run["id"], kind="run.transitioned")
    assert event.published_at is not None
    assert event.published_at <= timezone.now()
    assert async_to_sync(_next_message)(layer, channel)["event_id"] == event.pk
