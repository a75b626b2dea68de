"""Claims (SPEC section 10): one reviewer works a card at a time.

POST approvals/{id}/claim/ holds the card for CONDOR_CLAIM_TTL_SECONDS; the holder
renews by claiming again; anyone else gets 409 approval_claimed naming the holder,
for the claim and for a decision. The holder releases it (DELETE → 204), a decision
ends it, and an expired claim holds nothing. Every step is audited and pushed.
"""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from approvals import cards
from approvals.models import Approval
from audit.models import AuditEvent
from runs.models import RunEvent
from tests.helpers.approval_loop import approval_row, approve, decide, parked_run, suspend
from tests.helpers.clock import frozen_clock
from tests.helpers.http import post_json
from tests.helpers.personas import logged_in
from tests.helpers.races import all_at_once
from tests.helpers.runs import open_executing_run


@pytest.fixture
def rob_http(rob):
    return logged_in(rob)


@pytest.fixture
def parked(api) -> str:
    return parked_run(api)[1]["id"]


def claim(http, approval_id):
    return post_json(http, f"/api/v1/approvals/{approval_id}/claim/", {})


def release(http, approval_id):
    return http.delete(f"/api/v1/approvals/{approval_id}/claim/", HTTP_X_CSRFTOKEN=http.cookies["csrftoken"].value)


def test_a_reviewer_claims_a_card(parked, reviewer_http, monkeypatch):
    now = frozen_clock(monkeypatch, timezone.now())
    response = claim(reviewer_http, parked)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["claimed_by"] == "rita"
    row = approval_row(parked)
    assert row.claimed_by.username == "rita"
    assert body["claim_expires_at"] == row.claim_expires_at.isoformat()
    assert row.claim_expires_at == now + timedelta(seconds=300)


@override_settings(CONDOR_CLAIM_TTL_SECONDS=60)
def test_the_claim_lasts_the_configured_ttl(parked, reviewer_http, monkeypatch):
    now = frozen_clock(monkeypatch, timezone.now())
    claim(reviewer_http, parked)
    assert approval_row(parked).claim_expires_at == now + timedelta(seconds=60)


def test_the_holder_claiming_again_renews(parked, reviewer_http, monkeypatch):
    start = frozen_clock(monkeypatch, timezone.now())
    claim(reviewer_http, parked)
    frozen_clock(monkeypatch, start + timedelta(seconds=100))
    renewed = claim(reviewer_http, parked)
    assert renewed.status_code == 200
    assert approval_row(parked).claim_expires_at == start + timedelta(seconds=400)
    assert list(AuditEvent.objects.filter(kind="claim").order_by("id").values_list("decision", flat=True)) == [
        "claimed",
        "renewed",
    ]


def test_another_reviewer_is_told_who_holds_it(parked, reviewer_http, rob_http):
    claim(reviewer_http, parked)
    refused = claim(rob_http, parked)
    assert refused.status_code == 409
    assert refused.json()["error"] == "approval_claimed"
    assert "rita" in refused.json()["detail"]
    assert approval_row(parked).claimed_by.username == "rita"


def test_another_reviewer_cannot_decide_a_claimed_card(parked, reviewer_http, rob_http):
    claim(reviewer_http, parked)
    refused = decide(rob_http, parked, {"approved": False, "reason": "Not needed."})
    assert refused.status_code == 409 and refused.json()["error"] == "approval_claimed"
    assert approval_row(parked).status == "pending"


def test_the_holder_decides_and_the_decision_ends_the_claim(parked, reviewer_http):
    claim(reviewer_http, parked)
    approve(reviewer_http, parked)
    row = approval_row(parked)
    assert (row.status, row.claimed_by_id, row.claim_expires_at) == ("approved", None, None)


def test_an_unclaimed_card_is_decided_by_anyone(parked, rob_http):
    assert approve(rob_http, parked)["status"] == "approved"


def test_the_holder_releases_it(parked, reviewer_http, rob_http):
    claim(reviewer_http, parked)
    assert release(reviewer_http, parked).status_code == 204
    assert approval_row(parked).claimed_by_id is None
    assert claim(rob_http, parked).status_code == 200
    assert list(AuditEvent.objects.filter(kind="claim").order_by("id").values_list("decision", "actor")) == [
        ("claimed", "user:rita"),
        ("released", "user:rita"),
        ("claimed", "user:rob"),
    ]


def test_only_the_holder_releases_it(parked, reviewer_http, rob_http):
    claim(reviewer_http, parked)
    refused = release(rob_http, parked)
    assert refused.status_code == 409 and refused.json()["error"] == "approval_claimed"
    assert approval_row(parked).claimed_by.username == "rita"


def test_releasing_a_claim_nobody_holds_changes_nothing(parked, reviewer_http):
    assert release(reviewer_http, parked).status_code == 204
    assert not AuditEvent.objects.filter(kind="claim").exists()


def test_an_expired_claim_holds_nothing(parked, reviewer_http, rob_http, monkeypatch):
    claim(reviewer_http, parked)
    frozen_clock(monkeypatch, timezone.now() + timedelta(seconds=301))
    assert claim(rob_http, parked).status_code == 200
    assert approval_row(parked).claimed_by.username == "rob"


def test_a_decision_after_the_claim_expired_goes_through(parked, reviewer_http, rob_http, monkeypatch):
    claim(reviewer_http, parked)
    Approval.objects.filter(pk=parked).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    assert approve(rob_http, parked)["status"] == "approved"


def test_a_decided_card_cannot_be_claimed(parked, reviewer_http):
    approve(reviewer_http, parked)
    refused = claim(reviewer_http, parked)
    assert refused.status_code == 409 and refused.json()["error"] == "approval_not_pending"


def test_a_missing_card_is_404(reviewer_http):
    assert claim(reviewer_http, "00000000-0000-0000-0000-000000000000").status_code == 404


def test_an_api_key_cannot_claim(parked, api):
    assert api.post(f"/api/v1/approvals/{parked}/claim/", {}, format="json").status_code == 403


def test_the_claim_is_pushed_on_the_card_and_its_end_too(parked, reviewer_http):
    claim(reviewer_http, parked)
    pushed = RunEvent.objects.filter(kind="approval.claim_claimed").get().inbox
    assert pushed["type"] == "card.updated"
    assert (pushed["card"]["claimed_by"], pushed["card"]["id"]) == ("rita", parked)
    release(reviewer_http, parked)
    assert RunEvent.objects.filter(kind="approval.claim_released").get().inbox["card"]["claimed_by"] is None


def test_an_expired_claim_is_not_shown_on_the_card(parked, reviewer_http):
    claim(reviewer_http, parked)
    Approval.objects.filter(pk=parked).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    card = cards.card(approval_row(parked))
    assert (card["claimed_by"], card["claim_expires_at"]) == (None, None)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_reviewers_claiming_at_once_one_wins(api, rita, rob):
    parked = suspend(api, open_executing_run(api))["id"]
    browsers = [logged_in(rita), logged_in(rob)]
    answers = all_at_once([lambda http=http: claim(http, parked).status_code for http in browsers])
    assert sorted(answers) == [200, 409]
