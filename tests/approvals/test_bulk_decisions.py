"""Bulk decisions: several low-risk cards, one reason, one request; each card decided and audited on its own.

POST approvals/bulk-decision/ decides each card as its own decision would be decided (claims, four
eyes, visibility), and every card's decision audit row carries the bulk's id. A bulk with a card that
is not a low-risk approval (high risk, untiered, a question) is 422 bulk_high_risk; more than 50 cards
is 400 bulk_too_large; a card the reviewer may not see is 404: each refusal decides nothing.
"""

import uuid

import pytest
from django.core.management import call_command

from approvals.models import Approval, ApprovalStatus
from audit.models import AuditEvent
from tests.helpers.approval_loop import approval_row, approve, clarify, suspend
from tests.helpers.http import post_json
from tests.helpers.personas import logged_in
from tests.helpers.runs import open_executing_run

URL = "/api/v1/approvals/bulk-decision/"
VITALS = {"pulse": 88, "temperature_c": 37.9}


@pytest.fixture
def rob_http(rob):
    return logged_in(rob)


def low_risk(api, n: int = 3) -> list[dict]:
    """`n` parked record_vitals calls (low tier), each in its own run."""
    return [
        suspend(
            api,
            open_executing_run(api, patient_ref=f"MRN-9100{i}", age_band="adult"),
            tool="record_vitals",
            args=VITALS,
        )
        for i in range(n)
    ]


def bulk(http, approvals, *, approved=True, reason="Routine observations, in range", **extra):
    cards = [{"id": a["id"], "payload_hash": a["payload_hash"]} for a in approvals]
    return post_json(http, URL, {"approved": approved, "reason": reason, "cards": cards, **extra})


def decision_rows(approval_id) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=AuditEvent.Kind.DECISION, approval_id=approval_id).order_by("id"))


def test_each_low_risk_card_is_approved_and_audited_with_the_bulk_id(api, reviewer_http):
    cards = low_risk(api)
    assert {c["hitl_tier"] for c in cards} == {"low"}
    response = bulk(reviewer_http, cards)
    assert response.status_code == 200, response.content
    body = response.json()
    bulk_id = body["bulk_id"]
    assert uuid.UUID(bulk_id) and body["decided"] == 3
    assert [(r["id"], r["status"], r["error"]) for r in body["results"]] == [(c["id"], "approved", "") for c in cards]
    for card in cards:
        row = approval_row(card["id"])
        assert (row.status, row.decided_by.username, row.decision_reason) == (
            ApprovalStatus.APPROVED,
            "rita",
            "Routine observations, in range",
        )
        [audited] = decision_rows(card["id"])  # one row per card, as a single decision writes
        assert (audited.decision, audited.actor, audited.data["bulk_id"]) == ("approved", "user:rita", bulk_id)
        assert audited.data["reason"] == "Routine observations, in range"


def test_a_bulk_rejection_rejects_each_card_with_the_reason(api, reviewer_http):
    cards = low_risk(api, 2)
    response = bulk(reviewer_http, cards, approved=False, reason="Taken on the wrong patient")
    assert response.status_code == 200, response.content
    for card in cards:
        row = approval_row(card["id"])
        assert (row.status, row.decision_reason) == (ApprovalStatus.REJECTED, "Taken on the wrong patient")
        assert decision_rows(card["id"])[0].data["bulk_id"] == response.json()["bulk_id"]


def test_two_bulks_have_two_ids(api, reviewer_http):
    first, second = low_risk(api, 2)
    a, b = bulk(reviewer_http, [first]).json(), bulk(reviewer_http, [second]).json()
    assert a["bulk_id"] != b["bulk_id"]


def test_a_high_risk_card_refuses_the_whole_bulk(api, reviewer_http):
    cards = low_risk(api, 2)
    high = suspend(api, open_executing_run(api))  # prescribe_medication: high tier
    assert high["hitl_tier"] == "high"
    response = bulk(reviewer_http, cards + [high])
    assert response.status_code == 422
    assert response.json()["error"] == "bulk_high_risk"
    assert high["id"] in response.json()["detail"]
    assert set(Approval.objects.values_list("status", flat=True)) == {ApprovalStatus.PENDING}
    assert not AuditEvent.objects.filter(kind=AuditEvent.Kind.DECISION).exists()


def test_a_high_risk_card_is_never_bulk_rejected_either(api, reviewer_http):
    high = suspend(api, open_executing_run(api))
    response = bulk(reviewer_http, [high], approved=False)
    assert (response.status_code, response.json()["error"]) == (422, "bulk_high_risk")
    assert approval_row(high["id"]).status == ApprovalStatus.PENDING


def test_a_question_refuses_the_bulk(api, reviewer_http):
    cards = low_risk(api, 1)
    run_id = open_executing_run(api)
    asked = clarify(api, run_id, [{"name": "route", "type": "string"}]).json()["approval"]
    response = post_json(
        reviewer_http, URL, {"approved": False, "reason": "No", "cards": [{"id": cards[0]["id"]}, {"id": asked["id"]}]}
    )
    assert (response.status_code, response.json()["error"]) == (422, "bulk_high_risk")
    assert approval_row(cards[0]["id"]).status == ApprovalStatus.PENDING


def test_more_than_fifty_cards_is_bulk_too_large(api, reviewer_http):
    cards = low_risk(api, 1)
    listed = [{"id": cards[0]["id"]}] + [{"id": str(uuid.uuid4())} for _ in range(50)]
    response = post_json(reviewer_http, URL, {"approved": True, "reason": "Routine", "cards": listed})
    assert (response.status_code, response.json()["error"]) == (400, "bulk_too_large")
    assert approval_row(cards[0]["id"]).status == ApprovalStatus.PENDING


def test_fifty_cards_are_taken(api, reviewer_http):
    cards = low_risk(api, 1)
    listed = [{"id": cards[0]["id"]}] + [{"id": str(uuid.uuid4())} for _ in range(49)]
    response = post_json(reviewer_http, URL, {"approved": True, "reason": "Routine", "cards": listed})
    assert response.status_code == 404  # past the size check: the 49 made up are nobody's cards


def test_an_unknown_card_is_404_and_decides_nothing(api, reviewer_http):
    cards = low_risk(api, 2)
    missing = str(uuid.uuid4())
    response = post_json(
        reviewer_http, URL, {"approved": True, "reason": "Routine", "cards": [{"id": cards[0]["id"]}, {"id": missing}]}
    )
    assert (response.status_code, response.json()["error"]) == (404, "not_found")
    assert missing in response.json()["detail"]
    assert approval_row(cards[0]["id"]).status == ApprovalStatus.PENDING


def test_a_card_outside_the_reviewers_teams_is_404(api, reviewer_http, rita, rob):
    from approvals.models import ReviewTeam

    team = ReviewTeam.objects.create(name="Cardiology", care_units=["CCU"])
    team.members.set([rob])  # rita is in no team of CCU: its cards are not hers
    ccu = suspend(api, open_executing_run(api, care_unit="CCU", age_band="adult"), tool="record_vitals", args=VITALS)
    response = bulk(reviewer_http, [ccu])
    assert (response.status_code, response.json()["error"]) == (404, "not_found")
    assert approval_row(ccu["id"]).status == ApprovalStatus.PENDING


@pytest.mark.parametrize(
    "body",
    [
        {"approved": True, "cards": []},
        {"approved": True, "reason": "   ", "cards": []},
        {"approved": True, "reason": "Fine", "cards": []},
        {"reason": "Fine", "cards": [{"id": str(uuid.uuid4())}]},
        {"approved": True, "reason": "Fine", "cards": [{"id": "not-a-uuid"}]},
        {"approved": True, "reason": "Fine", "cards": [{"id": str(uuid.uuid4()), "extra": 1}]},
        {"approved": True, "reason": "Fine", "cards": [{"id": str(uuid.uuid4())}], "stop_run": True},
    ],
)
def test_a_malformed_bulk_is_invalid_payload(reviewer_http, body):
    response = post_json(reviewer_http, URL, body)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")


def test_a_card_listed_twice_is_invalid_and_decides_nothing(api, reviewer_http):
    [card] = low_risk(api, 1)
    response = bulk(reviewer_http, [card, card])
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert approval_row(card["id"]).status == ApprovalStatus.PENDING


def test_a_card_another_reviewer_claimed_is_left_and_the_others_decided(api, reviewer_http, rob_http):
    held, free = low_risk(api, 2)
    assert post_json(rob_http, f"/api/v1/approvals/{held['id']}/claim/", {}).status_code == 200
    body = bulk(reviewer_http, [held, free]).json()
    assert [(r["status"], r["error"]) for r in body["results"]] == [(None, "approval_claimed"), ("approved", "")]
    assert "rob" in body["results"][0]["detail"]
    assert body["decided"] == 1
    assert approval_row(held["id"]).status == ApprovalStatus.PENDING
    assert approval_row(free["id"]).status == ApprovalStatus.APPROVED


def test_four_eyes_counts_a_bulk_approval_as_one_reviewers(api, reviewer_http, rob_http):
    call_command("register_tool", "record_vitals", "--class", "mutate", "--tier", "low", "--approvals-required", "2")
    [card] = low_risk(api, 1)
    first = bulk(reviewer_http, [card]).json()["results"][0]
    assert (first["status"], first["approval"]["approvals_required"]) == ("pending", 2)
    again = bulk(reviewer_http, [card]).json()["results"][0]
    assert again["error"] == "already_approved_by_you"  # the same reviewer cannot be both pairs of eyes
    second = bulk(rob_http, [card]).json()["results"][0]
    assert second["status"] == "approved"
    rows = decision_rows(card["id"])
    assert [r.decision for r in rows] == ["approval_counted", "approved"]
    assert rows[0].data["bulk_id"] != rows[1].data["bulk_id"]


def test_a_card_decided_meanwhile_is_reported(api, reviewer_http):
    first, second = low_risk(api, 2)
    approve(reviewer_http, first["id"])
    body = bulk(reviewer_http, [first, second]).json()
    assert [r["error"] for r in body["results"]] == ["approval_not_pending", ""]
    assert "bulk_id" not in decision_rows(first["id"])[0].data  # a single decision carries none


def test_an_agents_key_is_refused(api):
    [card] = low_risk(api, 1)
    response = api.post(URL, {"approved": True, "reason": "Fine", "cards": [{"id": card["id"]}]}, format="json")
    assert (response.status_code, response.json()["error"]) == (403, "permission_denied")
    assert approval_row(card["id"]).status == ApprovalStatus.PENDING


def test_signed_out_is_refused(client, api):
    [card] = low_risk(api, 1)
    response = client.post(
        URL, {"approved": True, "reason": "Fine", "cards": [{"id": card["id"]}]}, content_type="application/json"
    )
    assert response.status_code in (401, 403)
    assert approval_row(card["id"]).status == ApprovalStatus.PENDING
