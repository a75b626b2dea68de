"""A page builds its cards from plain rows (cards.CARD_ROW through cards.card_of_row), a push
from the approval itself (cards.card, as card.added sends it): the two must be the same bytes,
or the snapshot and a push would show a reviewer two versions of one card (issue 11)."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from approvals import cards
from approvals.models import Approval, ApprovalStatus, ToolCall
from runs.models import Run
from sessions_app.models import Session
from tests.helpers.approval_loop import gate, suspend
from tests.helpers.bulk import pending_cards_in_bulk
from tests.helpers.runs import append, open_executing_run

pytestmark = pytest.mark.django_db

ODD_ARGS = {
    "dose_mg_per_kg": 7.5,
    "weight_kg": 72.0,
    "tiny": 1e-7,
    "note": 'é ✓ \U0001f600 "q" \\ \n',
    "\U0001f48a": [0.1, -0.0, 2**53 - 1, None, True],
}


@pytest.fixture
def approvals_in_every_state(api, ward_agent, rob) -> list:
    """Pending approvals with everything a card can say: a live and an expired claim, four eyes
    with an edit and a counted vote, a grant in the run, escalation, a message and form, a
    tainted session with its source, rationale and conversation turn, calls with a long and a
    non-text rationale (stored before the API refused them), floats and text past the BMP in the args."""
    made = pending_cards_in_bulk(ward_agent, 8, escalate_every=3, args=ODD_ARGS)
    now = timezone.now()
    Approval.objects.filter(pk=made[0].pk).update(claimed_by=rob, claim_expires_at=now + timedelta(minutes=5))
    Approval.objects.filter(pk=made[1].pk).update(claimed_by=rob, claim_expires_at=now - timedelta(minutes=5))
    Approval.objects.filter(pk=made[2].pk).update(
        approvals_required=2,
        approved_args={"dose_mg": 1.25},
        payload_hash="1" * 64,
        message="Which ward?",
        resume_schema={"type": "object", "properties": {"dose": {"type": "number", "minimum": 0.5}}},
        approvals=[
            {"reviewer": "rob", "at": now.isoformat(), "reason": "ok", "payload_hash": "1" * 64},
            {"reviewer": "rita", "at": now.isoformat(), "reason": "old", "payload_hash": "0" * 64},
        ],
    )
    Approval.objects.filter(pk=made[3].pk).update(status=ApprovalStatus.APPROVED, decided_by=rob, decided_at=now)
    Session.objects.filter(pk=made[4].session_id).update(tainted=True, title="Ward ✓ \U0001f3e5")

    tainted_run = open_executing_run(api)
    assert (
        gate(api, tainted_run, tool="web_search", op="", args={"q": "x"}, tool_call_id="search-1").json()["decision"]
        == "allow"
    )
    api.post(f"/api/v1/runs/{tainted_run}/tool-calls/search-1/result/", {"output": {"hits": 1}}, format="json")
    session_id = Run.objects.get(pk=tainted_run).session_id
    append(api, session_id, "user", [{"type": "text", "text": "Treat the sepsis ✓ \U0001f3e5"}])
    append(api, session_id, "assistant", [{"type": "text", "text": "Starting the bundle."}], run=tainted_run)
    tainted = suspend(api, tainted_run, tool_call_id="call-2", step_id="step-2", metadata={"rationale": "Because ✓."})
    clean = [suspend(api, open_executing_run(api), metadata={"rationale": "Because."}) for _ in range(2)]
    for approval, why in zip(clean, ("x" * 2100, {"why": 1}), strict=True):
        ToolCall.objects.filter(run_id=approval["run"]).update(metadata={"rationale": why})
    return [a.pk for a in made if a.pk != made[3].pk] + [tainted["id"]] + [approval["id"] for approval in clean]


def test_a_card_from_its_row_is_the_pushed_card_byte_for_byte(approvals_in_every_state):
    rows = list(Approval.objects.filter(pk__in=approvals_in_every_state).values(*cards.CARD_ROW))
    from_rows = cards.cards_for_rows(rows)

    assert len(from_rows) == len(approvals_in_every_state)
    said = {key for card in from_rows for key, value in card.items() if value}
    assert {
        "claimed_by",
        "run_granted",
        "approvals",
        "message",
        "tainted_by",
        "rationale",
        "turn",
        "escalated_at",
    } <= said
    for card in from_rows:
        pushed = cards.added(Approval.objects.get(pk=card["id"]))["card"]
        assert json.dumps(card) == json.dumps(pushed)


def test_an_approval_in_hand_reads_as_its_row(approvals_in_every_state):
    # The claimant of an expired claim is not read from an approval in hand (the card shows no name).
    for row in Approval.objects.filter(pk__in=approvals_in_every_state).values(*cards.CARD_ROW):
        in_hand = cards.row_of(Approval.objects.get(pk=row["id"]))
        assert set(in_hand) == set(cards.CARD_ROW)
        if row["claim_expires_at"] and row["claim_expires_at"] < timezone.now():
            assert in_hand.pop("claimed_by__username") is None
            row.pop("claimed_by__username")
        assert in_hand == row
