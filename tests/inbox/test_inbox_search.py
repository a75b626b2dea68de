"""GET /api/v1/inbox/cards/?patient_ref=&ward=&tool=&risk=: the queue's search, answered by the server.

Over every pending card the reviewer may see (not the pages loaded so far), in the same
pages as the snapshot, with the total that matches and, per patient on the page, how many
of theirs match. A patient search is a prefix, exact ref first; never a substring.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import Approval, ApprovalStatus, ReviewTeam
from inbox import pages as inbox_pages
from tests.helpers.bulk import pending_cards_in_bulk

URL = "/api/v1/inbox/cards/"


def search(http, **params):
    response = http.get(URL, params)
    assert response.status_code == 200, response.content
    return response.json()


def every_match(http, **params) -> list[dict]:
    pages = [search(http, **params)]
    while pages[-1]["cursor"] is not None:
        pages.append(search(http, **params, cursor=pages[-1]["cursor"]))
    return [card for page in pages for card in page["cards"]]


def patients(cards) -> list[str]:
    return [card["session"]["patient_ref"] for card in cards]


def test_a_patient_search_counts_every_match_before_any_paging(ward_agent, reviewer_http):
    pending_cards_in_bulk(ward_agent, 154, patient_ref="MRN-20417")
    pending_cards_in_bulk(ward_agent, 150)  # other patients: MRN-0 ... MRN-140

    first = search(reviewer_http, patient_ref="MRN-20417")

    assert (len(first["cards"]), first["total"], first["patient_totals"]) == (100, 154, {"MRN-20417": 154})
    assert set(patients(every_match(reviewer_http, patient_ref="MRN-20417"))) == {"MRN-20417"}
    assert len(every_match(reviewer_http, patient_ref="MRN-20417")) == 154


def test_the_exact_patient_comes_before_the_prefix_matches_and_a_substring_is_no_match(ward_agent, reviewer_http):
    for ref, n in [("MRN-70345", 3), ("MRN-7", 2), ("MRN-17", 4), ("XMRN-7", 1)]:
        pending_cards_in_bulk(ward_agent, n, patient_ref=ref, tiers=("high",))

    found = every_match(reviewer_http, patient_ref="mrn-7")

    assert patients(found) == ["MRN-7"] * 2 + ["MRN-70345"] * 3
    assert search(reviewer_http, patient_ref="MRN-7")["patient_totals"] == {"MRN-7": 2, "MRN-70345": 3}


def test_exact_first_holds_across_pages(ward_agent, reviewer_http):
    # The prefix matches are more urgent (escalated, high risk) and would lead the queue's own order.
    pending_cards_in_bulk(ward_agent, 120, patient_ref="MRN-70345", tiers=("high",), escalate_every=1)
    pending_cards_in_bulk(ward_agent, 30, patient_ref="MRN-7", tiers=(None,))

    found = every_match(reviewer_http, patient_ref="MRN-7")

    assert patients(found) == ["MRN-7"] * 30 + ["MRN-70345"] * 120
    assert len({card["id"] for card in found}) == 150


def test_ward_tool_and_risk_filters_apply_to_every_pending_card(ward_agent, reviewer_http):
    pending_cards_in_bulk(ward_agent, 150, care_unit="Ward 4", tiers=("high", "low", None))
    pending_cards_in_bulk(ward_agent, 60, care_unit="Ward 6", tool="record_vitals", tiers=("low",))

    assert search(reviewer_http, ward="Ward 4")["total"] == 150
    assert search(reviewer_http, tool="record_vitals")["total"] == 60
    assert search(reviewer_http, risk="high")["total"] == 50
    assert search(reviewer_http, risk="none")["total"] == 50
    assert search(reviewer_http, ward="Ward 6", risk="low", tool="record_vitals")["total"] == 60
    assert search(reviewer_http, ward="Ward 6", risk="high")["total"] == 0
    high = every_match(reviewer_http, risk="high")
    assert {card["hitl_tier"] for card in high} == {"high"} and len(high) == 50


def test_a_search_sees_only_what_the_reviewer_may_see(ward_agent, rita, reviewer_http):
    pending_cards_in_bulk(ward_agent, 5, care_unit="ICU", patient_ref="MRN-1")
    pending_cards_in_bulk(ward_agent, 3, care_unit="renal", patient_ref="MRN-1")
    ReviewTeam.objects.create(name="Intensive care", care_units=["ICU"])  # without rita
    ReviewTeam.objects.create(name="Renal", care_units=["renal"]).members.add(rita)

    found = search(reviewer_http, patient_ref="MRN-1")

    assert (found["total"], found["patient_totals"]) == (3, {"MRN-1": 3})
    assert search(reviewer_http, ward="ICU")["total"] == 0
    options = reviewer_http.get(f"{URL}filters/").json()
    assert options["wards"] == [{"value": "renal", "count": 3}]


def test_decided_and_overdue_cards_are_not_found(ward_agent, reviewer_http):
    rows = pending_cards_in_bulk(ward_agent, 4, patient_ref="MRN-5")
    Approval.objects.filter(pk=rows[0].pk).update(status=ApprovalStatus.REJECTED)
    assert search(reviewer_http, patient_ref="MRN-5")["total"] == 3


def test_the_filter_options_count_every_pending_card(ward_agent, reviewer_http):
    pending_cards_in_bulk(ward_agent, 150, care_unit="Ward 4")
    pending_cards_in_bulk(ward_agent, 20, care_unit="Ward 6", tool="record_vitals")
    pending_cards_in_bulk(ward_agent, 5)  # no ward

    options = reviewer_http.get(f"{URL}filters/").json()

    assert options == {
        "wards": [{"value": "Ward 4", "count": 150}, {"value": "Ward 6", "count": 20}],
        "tools": [{"value": "prescribe_medication", "count": 155}, {"value": "record_vitals", "count": 20}],
    }


def test_a_cursor_continues_only_the_search_it_was_sent_for(ward_agent, reviewer_http):
    pending_cards_in_bulk(ward_agent, 150, patient_ref="MRN-9")
    searched = search(reviewer_http, patient_ref="MRN-9")
    unfiltered = reviewer_http.get(URL).json()

    for params in ({"patient_ref": "MRN-"}, {"patient_ref": "MRN-9", "risk": "high"}, {}):
        response = reviewer_http.get(URL, {**params, "cursor": searched["cursor"]})
        assert (response.status_code, response.json()["error"]) == (400, "invalid_cursor"), params
    response = reviewer_http.get(URL, {"patient_ref": "MRN-9", "cursor": unfiltered["cursor"]})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_cursor")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"patient_ref": "M" * 121}, "patient_ref"),
        ({"ward": "W" * 65}, "ward"),
        ({"tool": "t" * 101}, "tool"),
        ({"tool": "drop table; --"}, "tool"),
        ({"risk": "medium"}, "risk"),
        ({"risk": "HIGH"}, "risk"),
    ],
)
def test_a_bad_search_or_filter_is_refused_and_named(ward_agent, reviewer_http, params, field):
    pending_cards_in_bulk(ward_agent, 2)
    response = reviewer_http.get(URL, params)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert response.json()["detail"].startswith(f"{field}:")


@pytest.mark.parametrize("name", ["patient_ref", "ward", "tool", "risk"])
def test_a_nul_in_a_search_is_a_400(ward_agent, reviewer_http, name):
    pending_cards_in_bulk(ward_agent, 2)
    response = reviewer_http.get(URL, {name: "MRN\x00-1"})
    assert response.status_code == 400


def test_the_longest_allowed_values_are_answered(ward_agent, reviewer_http):
    pending_cards_in_bulk(ward_agent, 2)
    found = search(reviewer_http, patient_ref="M" * 120, ward="W" * 64, tool="t" * 100, risk="none")
    assert (found["cards"], found["total"], found["cursor"]) == ([], 0, None)


def test_a_search_page_costs_the_same_queries_for_one_match_or_many(ward_agent, reviewer_http):
    def queries(expected: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert len(search(reviewer_http, patient_ref="MRN-3")["cards"]) == expected
        return len(captured)

    pending_cards_in_bulk(ward_agent, 1, patient_ref="MRN-3")
    one = queries(1)
    pending_cards_in_bulk(ward_agent, 30, patient_ref="MRN-30")
    # as the unfiltered page (test_inbox_cards_api.py), and the per-patient counts
    assert queries(31) == one <= 10


@pytest.mark.parametrize(("who", "error"), [("api_key", "permission_denied"), ("anonymous", "not_authenticated")])
def test_only_a_reviewer_may_search(api, client, ward_agent, who, error):
    pending_cards_in_bulk(ward_agent, 2)
    caller = {"api_key": api, "anonymous": client}[who]
    for response in (caller.get(URL, {"patient_ref": "MRN"}), caller.get(f"{URL}filters/")):
        assert (response.status_code, response.json()["error"]) == (403, error)


def test_no_search_page_is_over_the_frame_limit(ward_agent, reviewer_http):
    # Forty cards of ~15 KB each (under the card's own cut, so each is whole), of one patient: 600 KB in all.
    pending_cards_in_bulk(ward_agent, 40, args={"note": "x" * 15000}, patient_ref="MRN-" + "4" * 116)
    pages = [search(reviewer_http, patient_ref="MRN-4")]
    while pages[-1]["cursor"] is not None:
        pages.append(search(reviewer_http, patient_ref="MRN-4", cursor=pages[-1]["cursor"]))

    assert len(pages) > 2
    assert all(len(json.dumps(page).encode()) <= inbox_pages.PAGE_MAX_BYTES for page in pages)
    assert sum(len(page["cards"]) for page in pages) == 40
