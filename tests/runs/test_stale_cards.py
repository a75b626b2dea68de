"""A late card.added push is left out of the inbox once its card is no longer pending (runs.signals.stale_news, answered by inbox/socket_signals.stale_cards):
the drainer re-sends adds long after their commit, and a decided card must not come back."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.models import Approval
from runs import publish
from runs.models import RunEvent
from tests.helpers.approval_loop import approve, park
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.usefixtures("catalog")

OTHER_ARGS = (
    {"drug": "ibuprofen", "dose": "200 mg", "route": "oral", "days": 3},
    {"drug": "paracetamol", "dose": "1 g", "route": "oral", "days": 2},
)


def late():
    """Where the drainer's events end: created before it."""
    return timezone.now() - timedelta(seconds=publish.DRAIN_AFTER_SECONDS)


def card_events(run_id, *, drained: bool) -> dict[str, RunEvent]:
    """The card.added event of each card parked in `run_id`, by approval id; `drained`: as the drainer finds them."""
    events = RunEvent.objects.filter(run_id=run_id, kind="approval.suspended")
    if drained:
        events.update(created_at=timezone.now() - timedelta(seconds=publish.DRAIN_AFTER_SECONDS + 1))
    return {event.inbox["card"]["id"]: event for event in events}


def test_a_late_add_goes_out_only_while_its_card_is_pending_and_unexpired(
    api, reviewer_http, django_assert_num_queries
):
    run_id = open_executing_run(api)
    _pending, decided, expired = (
        park(api, run_id),
        park(api, run_id, args=OTHER_ARGS[0]),
        park(api, run_id, args=OTHER_ARGS[1]),
    )
    approve(reviewer_http, decided["id"])
    Approval.objects.filter(pk=expired["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    events = card_events(run_id, drained=True)

    with django_assert_num_queries(1):  # one read for the whole batch
        stale = publish.stale_events(list(events.values()), late())

    assert stale == {events[decided["id"]].pk, events[expired["id"]].pk}


def test_an_add_pushed_by_its_own_commit_is_not_read_again(api, django_assert_num_queries):
    run_id = open_executing_run(api)
    park(api, run_id)
    events = list(card_events(run_id, drained=False).values())
    with django_assert_num_queries(0):
        assert publish.stale_events(events, late()) == set()


def test_a_batch_without_cards_reads_nothing(api, django_assert_num_queries):
    run_id = open_executing_run(api)
    park(api, run_id)
    events = list(card_events(run_id, drained=True).values())
    for event in events:
        event.inbox = None
    with django_assert_num_queries(0):
        assert publish.stale_events(events, late()) == set()
