"""The compact queue at hospital scale (issue 14), in real Chromium with the server mocked:
one line per card, grouped by patient, filtered, searched, sorted and paged; the full card
in a detail pane with its context; a confirmation before a high-risk approval; shortcuts
that can be turned off; and a phone layout without horizontal scroll.

Run: .venv/bin/pytest tests/live/test_inbox_ui_queue.py -q
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live.bidi import HEBREW_DOSE, TATWEEL_DOSE, assert_drawn_in_sent_order
from tests.live.browser import ARTIFACTS_DIR
from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser

TOOLS = ["ehr.medication_order", "lab.order_panel", "comms.send_letter", "notes.append"]
WARDS = ["Ward 7", "ICU", "Renal"]


@pytest.fixture
def queue(page):
    # Every card in the first page: these tests are about the queue over what is loaded
    # (the loading itself: test_inbox_ui_paging.py).
    harness = InboxHarness(page, view="queue", whole_snapshot=True)
    yield harness
    assert harness.page_errors == [], f"JavaScript errors on the page: {harness.page_errors}"
    assert harness.server_errors == [], f"harness errors: {harness.server_errors}"


def hospital(n: int = 200) -> list[dict]:
    """n cards over n/4 patients, four tools, three wards, both tiers, deadlines spread out."""
    cards = []
    for i in range(n):
        cards.append(
            approval_card(
                tier="high" if i % 5 == 0 else "low",
                expires_in=120 + (i * 37) % 3000,
                tool=TOOLS[i % 4],
                patient_ref=f"MRN-{1000 + i % (n // 4)}",
                care_unit=WARDS[(i % (n // 4)) % 3],
            )
        )
    return cards


def rows(queue):
    return queue.page.get_by_test_id("queue-row")


def row(queue, card):
    return queue.page.locator(f'[data-testid="queue-row"][data-approval-id="{card["id"]}"]')


def row_ids(queue) -> list[str]:
    return queue.page.eval_on_selector_all('[data-testid="queue-row"]', "els => els.map(e => e.dataset.approvalId)")


def patients_in_order(queue) -> list[str]:
    return queue.page.eval_on_selector_all('[data-testid="queue-patient"]', "els => els.map(e => e.textContent)")


# --------------------------------------------------------------------------- scale, filter, search, sort, group


def test_two_hundred_cards_are_one_line_each_a_page_at_a_time(queue):
    cards = hospital(200)
    queue.open(cards)

    expect(rows(queue)).to_have_count(50)
    expect(queue.page.get_by_test_id("queue-range")).to_have_text("1–50 of 200")
    expect(queue.page.get_by_test_id("pending-count")).to_have_text("200")
    # Only the open card is drawn in full: no card is open yet.
    expect(queue.page.locator(".card.is-open")).to_have_count(0)
    expect(queue.page.get_by_test_id("detail-empty")).to_be_visible()
    first_page = row_ids(queue)

    queue.page.get_by_test_id("queue-next").click()
    expect(queue.page.get_by_test_id("queue-range")).to_have_text("51–100 of 200")
    assert not set(row_ids(queue)) & set(first_page)


def test_a_patients_cards_are_grouped_under_one_header(queue):
    queue.open(hospital(200))
    patients = patients_in_order(queue)
    # Each patient's lines are contiguous: a patient never comes back after another.
    seen = []
    for p in patients:
        if not seen or seen[-1] != p:
            assert p not in seen, f"{p} is split"
            seen.append(p)
    headers = queue.page.get_by_test_id("queue-group")
    expect(headers.first).to_contain_text(patients[0])
    expect(headers.first).to_contain_text("4 requests")


def test_search_by_patient_ref_and_filters_narrow_the_queue(queue):
    cards = hospital(200)
    queue.open(cards)
    page = queue.page

    page.get_by_test_id("queue-search").fill("mrn-1007")
    expect(rows(queue)).to_have_count(4)
    assert set(patients_in_order(queue)) == {"MRN-1007"}
    expect(page.get_by_test_id("queue-range")).to_have_text("1–4 of 4 (filtered from 200)")

    page.get_by_test_id("queue-search").fill("")
    # The tool filter reads as the queue lines do, in clinical words; it asks by the tool's name.
    expect(page.get_by_test_id("filter-tool").get_by_role("option", name="Order panel", exact=True)).to_have_attribute(
        "value", "lab.order_panel"
    )
    page.get_by_test_id("filter-tool").select_option(label="Order panel")
    page.get_by_test_id("filter-risk").select_option("high")
    expected = {c["id"] for c in cards if c["tool"] == "lab.order_panel" and c["hitl_tier"] == "high"}
    expect(rows(queue)).to_have_count(len(expected))
    assert set(row_ids(queue)) == expected

    page.get_by_test_id("filter-risk").select_option("")
    page.get_by_test_id("filter-ward").select_option("ICU")
    expected = {c["id"] for c in cards if c["tool"] == "lab.order_panel" and c["session"]["care_unit"] == "ICU"}
    expect(rows(queue)).to_have_count(len(expected))
    assert set(row_ids(queue)) == expected
    expect(page.get_by_test_id("queue-ward").first).to_have_text("ICU")


def test_sorting_by_time_left_puts_the_soonest_patient_first(queue):
    late_high = approval_card(tier="high", expires_in=3000, patient_ref="MRN-LATE")
    soon_low = approval_card(tier="low", expires_in=90, patient_ref="MRN-SOON")
    queue.open([late_high, soon_low])

    assert row_ids(queue) == [late_high["id"], soon_low["id"]]  # risk first by default
    queue.page.get_by_test_id("queue-sort").select_option("time")
    expect(rows(queue).first).to_have_attribute("data-approval-id", soon_low["id"])


def test_a_runs_cards_stay_together_inside_their_patient(queue):
    run = "11111111-2222-3333-4444-555555555555"
    a = approval_card(tier="high", expires_in=100, patient_ref="MRN-1", run_id=run)
    b = approval_card(tier="low", expires_in=200, patient_ref="MRN-1")
    c = approval_card(tier="low", expires_in=3000, patient_ref="MRN-1", run_id=run)
    queue.open([a, b, c])

    assert row_ids(queue) == [a["id"], c["id"], b["id"]]
    expect(row(queue, a)).to_have_attribute("data-run", "11111111")


# --------------------------------------------------------------------------- the detail pane


def test_opening_a_line_shows_its_card_and_its_runs_other_cards_only(queue):
    run = "aaaaaaaa-2222-3333-4444-555555555555"
    a = approval_card(tier="low", expires_in=100, run_id=run, patient_ref="MRN-1")
    b = approval_card(tier="low", expires_in=300, run_id=run, patient_ref="MRN-1")
    other = approval_card(tier="low", expires_in=200, patient_ref="MRN-2")
    queue.open([a, b, other])

    row(queue, b).click()

    expect(queue.card(b["id"])).to_be_visible()
    expect(queue.card(a["id"])).to_be_visible()  # same run: shown together before any stop
    expect(queue.card(other["id"])).to_be_hidden()
    expect(queue.card(b["id"])).to_be_focused()
    queue.card(b["id"]).get_by_test_id("approve").click()
    assert queue.wait_for_decisions(1)[0].approval_id == b["id"]
    expect(row(queue, b)).to_have_count(0)


def test_j_and_k_walk_the_queue_and_open_each_card(queue):
    cards = [approval_card(tier="low", expires_in=s, patient_ref=f"MRN-{s}") for s in (100, 200, 300)]
    queue.open(cards)
    keyboard = queue.page.keyboard

    keyboard.press("j")
    expect(queue.card(cards[0]["id"])).to_be_focused()
    keyboard.press("j")
    expect(queue.card(cards[1]["id"])).to_be_focused()
    expect(queue.card(cards[0]["id"])).to_be_hidden()
    keyboard.press("k")
    expect(queue.card(cards[0]["id"])).to_be_focused()


def test_after_a_decision_j_opens_the_line_that_took_its_place(queue):
    cards = [approval_card(tier="low", expires_in=s, patient_ref=f"MRN-{s}") for s in (100, 200, 300)]
    queue.open(cards)
    keyboard = queue.page.keyboard
    keyboard.press("j")
    keyboard.press("j")
    keyboard.press("a")  # low risk: approved at once
    assert queue.wait_for_decisions(1)[0].approval_id == cards[1]["id"]
    expect(row(queue, cards[1])).to_have_count(0)

    keyboard.press("j")
    expect(queue.card(cards[2]["id"])).to_be_focused()


def test_a_line_says_what_the_call_does_and_its_leading_values(queue):
    # As jsonb stores them: the keys by length, so the drug is not first.
    args = {"days": 5, "mrn": "MRN-1", "route": "oral", "dose_mg": 500, "frequency": "8-hourly", "drug": "amoxicillin"}
    card = approval_card(tool="prescribe_medication", op="create", args=args, patient_ref="MRN-1")
    question = clarification_card(args={"clinic": "cardiology", "urgent": True})
    queue.open([card, question])

    line = row(queue, card)
    expect(line.get_by_test_id("queue-tool")).to_have_text("New prescription")
    expect(line.get_by_test_id("queue-values")).to_have_text("· amoxicillin · 500 mg · 8-hourly")
    expect(line.get_by_role("button")).to_have_accessible_name(
        re.compile(r"New prescription · amoxicillin · 500 mg · 8-hourly")
    )
    expect(row(queue, question).get_by_test_id("queue-values")).to_have_text("· cardiology")


def test_a_long_value_is_cut_with_the_pages_own_ellipsis_never_marked_as_the_agents(queue):
    reason = "Recorded in error — tolerated amoxicillin in 2029 without a reaction"
    card = approval_card(tool="ehr.allergy_record", op="delete", args={"substance": "penicillin", "reason": reason})
    queue.open([card])
    values = row(queue, card).get_by_test_id("queue-values")
    expect(values).to_have_text(f"· penicillin · {reason[:39]}…")
    expect(values.get_by_test_id("lookalike-char")).to_have_count(0)


def test_a_lines_values_are_judged_as_one_line(queue):
    # "рау" alone is a word of another script; beside Latin values it mimics "pay".
    card = approval_card(args={"drug": "amoxicillin", "route": "\u0440\u0430\u0443"})
    queue.open([card])
    expect(row(queue, card).get_by_test_id("queue-values").get_by_test_id("lookalike-char")).not_to_have_count(0)


def test_a_lines_values_keep_their_digits_in_the_order_sent(queue):
    for dose in (TATWEEL_DOSE, HEBREW_DOSE):
        card = approval_card(args={"drug": "gentamicin", "dose": dose})
        queue.open([card])
        values = row(queue, card).get_by_test_id("queue-values")
        expect(values.get_by_test_id("rtl-char").first).to_be_visible()
        assert_drawn_in_sent_order(values, "2525")


def test_the_ward_and_the_claim_show_on_the_line_when_the_card_has_them(queue):
    claimed = approval_card(claimed_by="bob", care_unit="Ward 7")
    plain = approval_card()
    queue.open([claimed, plain])

    expect(row(queue, claimed).get_by_test_id("queue-ward")).to_have_text("Ward 7")
    expect(row(queue, claimed).get_by_test_id("queue-claim")).to_have_text("bob is reviewing")
    expect(row(queue, claimed).get_by_test_id("queue-open")).to_have_accessible_name(
        re.compile(r"Ward 7 bob is reviewing ")
    )
    expect(row(queue, plain).get_by_test_id("queue-ward")).to_be_hidden()
    expect(row(queue, plain).get_by_test_id("queue-claim")).to_be_hidden()


def test_the_reviewers_own_claim_says_you_are_reviewing_on_the_line_as_on_the_card(queue):
    mine = approval_card(claimed_by="rita")  # the page is rita's
    queue.open([mine])

    expect(row(queue, mine).get_by_test_id("queue-claim")).to_have_text("You are reviewing")
    expect(row(queue, mine).get_by_test_id("queue-open")).to_have_accessible_name(re.compile(r" You are reviewing "))
    row(queue, mine).get_by_test_id("queue-open").click()
    expect(queue.card(mine["id"]).get_by_test_id("card-claim")).to_contain_text("You are reviewing")

    queue.rows.release(mine["id"])
    queue.update(mine["id"])
    expect(row(queue, mine).get_by_test_id("queue-claim")).to_be_hidden()


def test_a_claim_that_runs_out_leaves_the_line_on_the_tick_not_the_next_push(queue):
    frozen = queue.open_with_clock_stopped()
    card = approval_card(claimed_by="bob", claim_seconds=90, now=frozen)
    queue.add(card)
    queue.page.clock.run_for(1_000)  # the queue draws on the next animation frame
    claim, line = row(queue, card).get_by_test_id("queue-claim"), row(queue, card).get_by_test_id("queue-open")
    expect(claim).to_have_text("bob is reviewing")

    queue.page.clock.run_for(88_000)  # a second of the claim left
    expect(claim).to_have_text("bob is reviewing")
    queue.page.clock.run_for(2_000)  # past it: no push, no poll, only the page's own tick
    expect(claim).to_be_hidden()
    expect(line).not_to_have_accessible_name(re.compile("is reviewing"))
    expect(line).to_have_accessible_name(re.compile(r" 8 min left · until \d\d:\d\d$"))


# --------------------------------------------------------------------------- context


def test_the_rationale_is_text_and_the_session_context_is_shown(queue):
    payload = '<img src=x onerror="window.__pwned=1"><b>bold</b>'
    card = approval_card(
        rationale=f"eGFR fell to 28. {payload}",
        autonomy="guarded",
        tainted_by="web_search",
        age_band="child",
        consent=False,
    )
    queue.open([card])
    row(queue, card).click()
    shown = queue.card(card["id"])

    expect(shown.get_by_test_id("card-rationale")).to_have_text(f"eGFR fell to 28. {payload}")
    assert shown.get_by_test_id("card-rationale").locator("img, b").count() == 0
    assert queue.page.evaluate("window.__pwned") is None
    expect(shown.get_by_test_id("fact-age")).to_have_text("Age: Child")
    expect(shown.get_by_test_id("fact-consent")).to_have_text("Consent: Not recorded")
    expect(shown.get_by_test_id("fact-autonomy")).to_have_text("Autonomy: Guarded (supervised)")
    expect(shown.get_by_test_id("card-taint")).to_contain_text("by the result of web_search at")


def test_a_card_without_context_shows_no_empty_boxes(queue):
    card = approval_card()
    queue.open([card])
    row(queue, card).click()
    shown = queue.card(card["id"])
    expect(shown.get_by_test_id("card-rationale")).to_be_hidden()
    expect(shown.get_by_test_id("card-taint")).to_be_hidden()


# --------------------------------------------------------------------------- safe shortcuts


def test_a_on_a_high_risk_card_asks_first_and_a_second_key_does_not_approve(queue):
    card = approval_card(tier="high", args={"drug": "gentamicin", "dose_mg": 350, "route": "IV"}, patient_ref="MRN-9")
    queue.open([card])
    keyboard = queue.page.keyboard
    shown = queue.card(card["id"])

    keyboard.press("j")
    keyboard.press("a")
    panel = shown.get_by_test_id("confirm-panel")
    expect(panel).to_be_visible()
    expect(panel.get_by_test_id("confirm-text")).to_contain_text("ehr.medication_order · create (MRN-9)")
    expect(panel.get_by_test_id("confirm-args")).to_have_text("drug: gentamicin · dose_mg: 350 · route: IV")
    expect(panel.get_by_test_id("confirm-cancel")).to_be_focused()
    keyboard.press("a")
    keyboard.press("Enter")  # on Cancel: the reflex second key cancels
    queue.round_trip()
    assert queue.decisions == []
    expect(panel).to_be_hidden()

    shown.get_by_test_id("approve").click()
    panel.get_by_test_id("confirm-approve").click()
    assert [d.body for d in queue.wait_for_decisions(1)] == [{"approved": True, "payload_hash": card["payload_hash"]}]


def test_a_low_risk_card_approves_without_a_confirmation(queue):
    card = approval_card(tier="low")
    queue.open([card])
    queue.page.keyboard.press("j")
    queue.page.keyboard.press("a")
    assert queue.wait_for_decisions(1)[0].approval_id == card["id"]


def test_single_key_shortcuts_can_be_turned_off_and_stay_off(queue):
    card = approval_card(tier="low")
    queue.open([card])
    page = queue.page
    page.get_by_text("Settings").click()
    page.get_by_test_id("shortcuts-toggle").uncheck()

    page.locator("body").press("j")
    page.locator("body").press("a")
    queue.round_trip()
    assert queue.decisions == []
    expect(page.locator(".card.is-selected")).to_have_count(0)
    expect(page.locator("#inbox-keys")).to_be_hidden()

    queue.open([card])  # a reload: the choice is remembered in this browser
    expect(page.get_by_test_id("shortcuts-toggle")).not_to_be_checked()
    page.locator("body").press("j")
    queue.round_trip()  # the key has been handled: its effect would be on the page by now
    expect(page.locator(".card.is-selected")).to_have_count(0)


# --------------------------------------------------------------------------- phone


def forty_field_card() -> dict:
    args = {f"field_{i:02d}": f"value {i} " + "long-unbroken-" * (i % 4) for i in range(36)}
    args.update(
        document={"title": "Discharge summary", "sections": [{"heading": "Plan", "text": "Stop apixaban " * 12}]},
        signer={"name": "Dr Example", "role": "consultant"},
        notes="x" * 400,
        pages=12,
    )
    return approval_card(tier="high", tool="docs.sign_document", op="sign", args=args, patient_ref="MRN-40")


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("width", [390])
def test_on_a_phone_the_queue_and_a_forty_field_card_fit_without_horizontal_scroll(queue, width):
    page = queue.page
    page.set_viewport_size({"width": width, "height": 844})
    big = forty_field_card()
    cards = [big, clarification_card(patient_ref="MRN-41"), *hospital(40)]
    queue.open(cards)

    assert no_horizontal_scroll(page)
    expect(page.get_by_test_id("queue-search")).to_be_visible()
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS_DIR / "inbox-phone-queue.png"))

    row(queue, big).click()
    shown = queue.card(big["id"])
    expect(shown).to_be_visible()
    expect(page.get_by_test_id("queue")).to_be_hidden()  # the detail covers the queue on a phone
    assert no_horizontal_scroll(page)
    # Every field is on the page, readable: no inner scroll box hides any of it.
    expect(shown.locator(".args__row")).to_have_count(40)
    assert shown.get_by_test_id("card-args").evaluate("el => el.scrollHeight <= el.clientHeight + 1")
    page.screenshot(path=str(ARTIFACTS_DIR / "inbox-phone-card.png"), full_page=True)

    page.get_by_test_id("detail-back").click()
    expect(page.get_by_test_id("queue")).to_be_visible()
    expect(row(queue, big).get_by_test_id("queue-open")).to_be_focused()


def test_desktop_screenshot(queue):
    page = queue.page
    cards = [
        approval_card(
            tier="high",
            care_unit="ICU",
            tainted_by="parse_uploaded_document",
            rationale="eGFR fell from 61 to 48 overnight; the renal protocol asks for a once-daily dose by weight.",
            args={
                "drug": "gentamicin",
                "dose_mg_per_kg": 5,
                "route": "IV",
                "renal_function": {"egfr": 48, "measured": "2030-01-14"},
            },
        ),
        *hospital(60),
    ]
    queue.open(cards)
    row(queue, cards[0]).click()
    expect(queue.card(cards[0]["id"])).to_be_visible()
    assert no_horizontal_scroll(page)
    page.evaluate("window.scrollTo(0, 0)")  # the picture in docs/ starts at the page's head
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS_DIR / "inbox-desktop-queue.png"))
