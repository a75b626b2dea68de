"""A card too big for an inbox frame on its own still goes, and the frame stays under the limit
(issue 11: no message over 256 KB): it sheds its args, then its run's grants, then what the approval
says at length, in that order and no further than it must (inbox/pages.py _LAST_RESORT).
The page loads what was shed from the approval on "Show all" (inbox/static/inbox/full_args.js)."""

import json

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from approvals import cards
from approvals.models import Approval, ApprovalStatus
from approvals.visibility import reviewer_scope
from inbox import pages as inbox_pages
from tests.helpers.bulk import pending_cards_in_bulk

pytestmark = pytest.mark.django_db


def lone_page(rita, max_bytes: int) -> tuple[dict, dict]:
    page = inbox_pages.page(reviewer_scope(User.objects.get(pk=rita.pk)), max_bytes=max_bytes)
    assert len(json.dumps({"type": "snapshot", "after": None, **page}).encode()) <= max_bytes
    (card,) = page["cards"]
    return page, card


def with_grants(approval, count: int) -> None:
    """`count` approved, unused grants in the card's run: its run_granted grows with them."""
    now = timezone.now()
    Approval.objects.bulk_create(
        Approval(
            run_id=approval.run_id,
            session_id=approval.session_id,
            client_id=approval.client_id,
            tool="prescribe_medication",
            op="create",
            tool_call_id=f"granted-{n}",
            step_id=f"granted-{n}",
            contract_hash=f"g{n:063d}",
            reason_code="approval",
            rule_id="bulk",
            args={},
            payload_hash="0" * 64,
            requested_at=now,
            expires_at=approval.expires_at,
            status=ApprovalStatus.APPROVED,
            decided_at=now,
        )
        for n in range(count)
    )


def test_a_card_that_fits_once_its_args_are_cut_keeps_everything_else(ward_agent, rita, settings):
    settings.CONDOR_CARD_ARGS_MAX_BYTES = 64 * 1024  # args a card would carry whole, but not in this frame
    (made,) = pending_cards_in_bulk(ward_agent, 1, args={"note": "x" * 30_000})
    with_grants(made, 5)

    _, card = lone_page(rita, 20_000)

    assert (card["args"], card["args_truncated"], card["cut_fields"]) == (None, True, ["args"])
    assert len(card["run_granted"]) == 5


def test_a_run_holding_many_grants_drops_them_after_the_args(ward_agent, rita, settings):
    settings.CONDOR_CARD_ARGS_MAX_BYTES = 64 * 1024
    (made,) = pending_cards_in_bulk(ward_agent, 1, args={"note": "x" * 30_000})
    with_grants(made, 200)
    whole = cards.card(Approval.objects.get(pk=made.pk))
    assert len(json.dumps(whole["run_granted"])) > 20_000

    _, card = lone_page(rita, 20_000)

    assert (card["args"], card["run_granted"], card["cut_fields"]) == (None, None, ["args", "run_granted"])
    assert card["message"] == whole["message"] and card["resume_schema"] == whole["resume_schema"]


def test_last_what_the_approval_says_at_length_which_the_page_loads_with_the_args(ward_agent, rita):
    (made,) = pending_cards_in_bulk(ward_agent, 1)
    with_grants(made, 200)
    Approval.objects.filter(pk=made.pk).update(
        message="Which dose? " * 300, resume_schema={"description": "y" * 30_000}
    )

    page, card = lone_page(rita, 20_000)

    assert card["cut_fields"] == ["args", "run_granted", "message", "explanation", "resume_schema", "approvals"]
    assert all(card[name] is None for name in card["cut_fields"])
    whole = cards.card(Approval.objects.get(pk=made.pk))
    # Everything not shed is as the card built whole says it (the id, deadline, session, hash...).
    assert {
        k: v for k, v in card.items() if k not in card["cut_fields"] + ["args_truncated", "args_preview", "cut_fields"]
    } == {k: v for k, v in whole.items() if k not in card["cut_fields"] + ["args_truncated", "args_preview"]}
    assert page["cursor"] is None
