"""A card.added push is left out of the inbox once its card is no longer pending (runs/publish._stale_cards):
the drainer re-sends adds long after the fact, and a decision's push can overtake an add."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.models import Approval
from runs import publish
from runs.models import RunEvent
from tests.helpers.approval_loop import approve, park
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.usefixtures("catalog")

OTHER_ARGS = ({"drug": "ibuprofen", "dose": "200 mg", "route": "oral", "days": 3},
              {"drug": "paracetamol", "dose": "1 g", "route": "oral", "days": 2})


def card_pushes(run_id) -> dict[str, publish.Push]:
    """The card.added push of each card parked in `run_id`, by approval id."""
    events = RunEvent.objects.filter(run_id=run_id, kind="approval.suspended")
    return {event.inbox["card"]["id"]: publish.Push.of(event) for event in events}


def test_only_a_pending_card_that_has_not_expired_is_pushed(api, reviewer_http, django_assert_num_queries):
    run_id = open_executing_run(api)
    pending, decided, expired = park(api, run_id), park(api, run_id, args=OTHER_ARGS[0]), \
        park(api, run_id, args=OTHER_ARGS[1])
    approve(reviewer_http, decided["id"])
    Approval.objects.filter(pk=expired["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    pushes = card_pushes(run_id)

    with django_assert_num_queries(1):  # one read for the whole batch
        stale = publish._stale_cards(list(pushes.values()))

    assert stale == {pushes[decided["id"]].pk, pushes[expired["id"]].pk}


def test_a_batch_without_cards_reads_nothing(api, django_assert_num_queries):
    run_id = open_executing_run(api)
    park(api, run_id)
    decision_less = [push._replace(inbox=None) for push in card_pushes(run_id).values()]
    with django_assert_num_queries(0):
        assert publish._stale_cards(decision_less) == set()
