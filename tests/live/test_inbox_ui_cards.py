"""The inbox list in real Chromium, websocket mocked: rendering, order, live add/remove, time, scale, reconnect.

The page is the production template and tests/live/inbox_harness.py plays the server.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from playwright.sync_api import expect

from registry.policy import RULES
from tests.governance.test_display import HIDDEN_OR_LOOKALIKE, ORDINARY
from tests.live.bidi import HEBREW_DOSE, TATWEEL_DOSE, assert_drawn_in_sent_order
from tests.live.inbox_page import CSRF_TOKEN, render_template
from tests.live.inbox_rows import approval_card, clarification_card

pytestmark = pytest.mark.browser


# --------------------------------------------------------------------------- list


def test_snapshot_renders_cards_high_tier_first_then_soonest_expiry(inbox):
    low_late = approval_card(tier="low", expires_in=900)
    high_late = approval_card(tier="high", expires_in=800)
    untiered_soon = clarification_card(expires_in=100)  # a question has no tier
    high_soon = approval_card(tier="high", expires_in=300)
    low_soon = approval_card(tier="low", expires_in=200)

    inbox.open([low_late, high_late, untiered_soon, high_soon, low_soon])

    assert inbox.displayed_ids() == [c["id"] for c in (high_soon, high_late, low_soon, low_late, untiered_soon)]
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("5")
    expect(inbox.connection).to_have_text("Live")
    expect(inbox.card(high_soon["id"]).get_by_test_id("tier-badge")).to_have_text("High risk")


def test_card_shows_who_what_and_why(inbox):
    card = approval_card(
        tier="high",
        tool="ehr.medication_order",
        op="create",
        patient_ref="MRN-777",
        title="Sepsis bay 3",
        client="sepsis-agent",
        args={"drug": "gentamicin", "dose_mg": 350, "renal": {"egfr": 48}},
    )
    inbox.open([card])
    shown = inbox.card(card["id"])

    expect(shown.get_by_test_id("card-tool")).to_have_text("ehr.medication_order")
    expect(shown.get_by_test_id("card-op")).to_have_text("create")
    expect(shown.get_by_test_id("card-patient")).to_have_text("MRN-777")
    expect(shown.get_by_test_id("card-session")).to_have_text("Sepsis bay 3")
    expect(shown.get_by_test_id("card-client")).to_have_text("sepsis-agent")
    # The policy engine's rule and the sentence it gives for it.
    expect(shown.get_by_test_id("card-rule")).to_have_text("mutate.high-tier-always-approval")
    expect(shown.get_by_test_id("card-explanation")).to_have_text(RULES["mutate.high-tier-always-approval"].explanation)
    expect(shown.get_by_test_id("card-args")).to_contain_text("gentamicin")
    # Nested objects are an indented tree of key and value, not JSON text in a scroll box.
    expect(shown.locator(".args__tree .args__node")).to_have_text(["egfr 48"])
    expect(shown.get_by_test_id("countdown")).to_have_text(re.compile(r"^\d+ min left · until \d\d:\d\d$"))


def test_hidden_and_look_alike_characters_are_marked_and_the_card_warns(inbox):
    # "\u202e5.2\u202c mg" would read "2.5 mg": the override must show, not act.
    tricked = approval_card(
        tool="ehr.medication_order",
        op="create",
        args={"dose": "\u202e5.2\u202c mg", "dr\u0435g": "amoxicillin", "route": "oral"},
    )
    plain = approval_card(args={"dose": "5.2 mg"})
    inbox.open([tricked, plain])
    shown = inbox.card(tricked["id"])

    expect(shown.get_by_test_id("card-hidden-warning")).to_be_visible()
    expect(shown.get_by_test_id("card-hidden-warning")).to_contain_text(
        "This card contains hidden or look-alike characters"
    )
    dose = shown.locator('.args__row[data-key="dose"] dd')
    expect(dose).to_have_text("⟨U+202E⟩5.2⟨U+202C⟩ mg")
    expect(dose.get_by_test_id("hidden-char")).to_have_count(2)
    # The override is gone from the DOM (a marker replaces it), so nothing is reordered.
    assert "\u202e" not in dose.evaluate("el => el.textContent")
    expect(shown.get_by_test_id("card-args").get_by_test_id("lookalike-char")).to_have_text("\u0435⟨U+0435⟩")
    expect(inbox.card(plain["id"]).get_by_test_id("card-hidden-warning")).to_be_hidden()
    # The inbox and the admin (core/display.py) judge text alike.
    verdicts = inbox.page.evaluate(
        "async (texts) => { const m = await import('/static/inbox/reveal.js'); return texts.map(m.hasHidden); }",
        HIDDEN_OR_LOOKALIKE + ORDINARY,
    )
    assert verdicts == [True] * len(HIDDEN_OR_LOOKALIKE) + [False] * len(ORDINARY)


@pytest.mark.parametrize("dose", [TATWEEL_DOSE, HEBREW_DOSE], ids=["tatweel", "hebrew"])
def test_right_to_left_letters_cannot_reorder_the_digits_of_a_value(inbox, dose):
    card = approval_card(args={"drug": "methotrexate", "dose_mg_per_week": dose})
    inbox.open([card])
    shown = inbox.card(card["id"])
    value = shown.locator('.args__row[data-key="dose_mg_per_week"] dd')
    assert_drawn_in_sent_order(value, "2525")
    expect(value.get_by_test_id("rtl-char").first).to_be_visible()
    expect(shown.get_by_test_id("card-hidden-warning")).to_be_visible()


def test_empty_inbox_says_nothing_is_waiting(inbox):
    inbox.open([])

    expect(inbox.page.get_by_test_id("empty-state")).to_be_visible()
    expect(inbox.page.get_by_test_id("empty-state")).to_contain_text("Nothing waiting for a decision")
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("0")


def test_header_shows_the_reviewer_and_signs_out_with_csrf(inbox):
    inbox.open([])

    expect(inbox.page.get_by_test_id("current-user")).to_have_text("rita")
    inbox.page.get_by_test_id("logout").click()
    inbox.page.wait_for_url("**/accounts/logout/")
    assert inbox.logouts == [f"csrfmiddlewaretoken={CSRF_TOKEN}"]


def test_card_added_appears_without_reload(inbox):
    first = approval_card(tier="low")
    inbox.open([first])
    inbox.page.evaluate("window.__sameDocument = true")

    urgent = approval_card(tier="high", expires_in=120)
    inbox.add(urgent)

    expect(inbox.cards()).to_have_count(2)
    assert inbox.displayed_ids() == [urgent["id"], first["id"]]
    assert inbox.page.evaluate("window.__sameDocument") is True


def test_card_added_twice_is_treated_as_an_update(inbox):
    # The socket joins its group before the snapshot, so a card parked in between comes twice.
    card = approval_card(args={"dose_mg": 500})
    inbox.open([card])
    inbox.rows.claim(card["id"], "bob")

    inbox.add(card)

    expect(inbox.card(card["id"]).get_by_test_id("card-claim")).to_have_text("bob is reviewing")
    expect(inbox.cards()).to_have_count(1)


def test_claim_and_release_work_when_the_push_beats_the_answer(inbox):
    # The server pushes card.updated on commit, so the socket often brings the claim before the
    # HTTP answer does; the answer then changes nothing on the card, but must still free Release.
    card = approval_card()
    inbox.open([card])
    toggle = inbox.card(card["id"]).get_by_test_id("claim-toggle")

    toggle.click()
    expect(inbox.card(card["id"]).get_by_test_id("card-claim")).to_contain_text("You are reviewing")
    expect(toggle).to_have_text("Release")
    expect(toggle).to_be_enabled()

    toggle.click()
    expect(toggle).to_have_text("Claim")
    expect(toggle).to_be_enabled()
    expect(inbox.card(card["id"]).get_by_test_id("card-claim")).to_be_hidden()
    assert inbox.rows.by_id[card["id"]].claimed_by is None


def test_card_removed_elsewhere_tells_the_reviewer_working_on_it(inbox):
    selected = approval_card(tier="high")
    other = approval_card(tier="low")
    inbox.open([selected, other])
    inbox.page.keyboard.press("j")
    expect(inbox.card(selected["id"])).to_have_class(re.compile(r"\bis-selected\b"))

    inbox.remove(selected["id"], status="approved", decided_by="alice")

    expect(inbox.card(selected["id"])).to_have_count(0)
    expect(inbox.feedback).to_contain_text("Approved by alice")

    inbox.remove(other["id"], status="expired", decided_by=None)
    expect(inbox.cards()).to_have_count(0)
    # Nobody was looking at that one: no extra noise.
    expect(inbox.feedback.get_by_test_id("feedback-message")).to_have_count(1)


@pytest.mark.parametrize(("status", "phrase"), [("approved", "Answered by alice"), ("rejected", "Declined by alice")])
def test_a_clarification_decided_elsewhere_is_answered_or_declined(inbox, status, phrase):
    question = clarification_card()
    inbox.open([question])
    inbox.page.keyboard.press("j")

    inbox.remove(question["id"], status=status, decided_by="alice")

    expect(inbox.feedback).to_contain_text(phrase)


def test_card_expiring_under_an_open_reject_says_expired(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.card(card["id"]).get_by_test_id("reject").click()
    inbox.card(card["id"]).get_by_test_id("reject-reason").fill("Wrong patient")

    inbox.remove(card["id"], status="expired", decided_by=None)

    expect(inbox.feedback).to_contain_text("Expired")


# --------------------------------------------------------------------------- safety, time, scale


def test_untrusted_args_are_shown_as_text_never_markup(inbox):
    card = approval_card(
        args={
            "note": '<img src=x onerror="window.__pwned=1"><b>bold</b>',
            "nested": {"html": "<script>window.__pwned=1</script>"},
        },
    )
    inbox.open([card])
    shown = inbox.card(card["id"])

    expect(shown.get_by_test_id("card-args")).to_contain_text("<b>bold</b>")
    assert shown.locator("img, script, b").count() == 0
    assert inbox.page.evaluate("window.__pwned") is None


def clock_time(page, at) -> str:
    """`at` as the page writes a clock time: hours and minutes in the browser's time zone."""
    return page.evaluate(
        "ms => { const d = new Date(ms); return `${String(d.getHours()).padStart(2, '0')}:"
        "${String(d.getMinutes()).padStart(2, '0')}`; }",
        at.timestamp() * 1000,
    )


def test_time_left_reads_in_minutes_beside_the_deadline_as_a_clock_time(inbox):
    frozen = inbox.open_with_clock_stopped()
    soon, later = (
        approval_card(expires_in=750, now=frozen),
        approval_card(expires_in=2 * 3600 + 5 * 60 + 30, now=frozen),
    )
    inbox.add(soon)
    inbox.add(later)
    expect(inbox.card(soon["id"]).get_by_test_id("countdown")).to_have_text(
        f"12 min left · until {clock_time(inbox.page, frozen + timedelta(seconds=750))}"
    )
    expect(inbox.card(later["id"]).get_by_test_id("countdown")).to_have_text(
        f"2 h 05 min left · until {clock_time(inbox.page, frozen + timedelta(seconds=7530))}"
    )
    asked = clock_time(inbox.page, datetime.fromisoformat(soon["requested_at"]))
    expect(inbox.card(soon["id"]).locator("time.meta__time")).to_have_text(f"asked at {asked}")


def test_countdown_turns_urgent_then_expired_disables_actions(inbox):
    # The card is parked at the instant the page's clock stands at: the countdown has one right value.
    frozen = inbox.open_with_clock_stopped()
    card = approval_card(expires_in=90, now=frozen)
    inbox.add(card)
    shown = inbox.card(card["id"])
    until = clock_time(inbox.page, frozen + timedelta(seconds=90))
    expect(shown.get_by_test_id("countdown")).to_have_text(f"1 min left · until {until}")
    expect(shown).not_to_have_class(re.compile(r"\bis-urgent\b"))

    inbox.page.clock.run_for(35_000)
    expect(shown).to_have_class(re.compile(r"\bis-urgent\b"))
    expect(shown.get_by_test_id("countdown")).to_have_text(f"under 1 min left · until {until}")

    inbox.page.clock.run_for(60_000)
    expect(shown.get_by_test_id("countdown")).to_have_text("Expired")
    expect(shown.get_by_test_id("approve")).to_be_disabled()
    expect(shown.get_by_test_id("reject")).to_be_disabled()
    expect(shown.get_by_test_id("edit")).to_be_disabled()


def test_500_cards_render_and_one_removal_touches_only_that_card(inbox):
    cards = [approval_card(tier="high" if i % 7 == 0 else "low", expires_in=300 + i) for i in range(500)]
    inbox.whole_snapshot = True  # all of them loaded (paging: test_inbox_ui_paging.py)
    inbox.open(cards)
    expect(inbox.cards()).to_have_count(500)
    expect(inbox.page.get_by_test_id("pending-count")).to_have_text("500")

    inbox.page.evaluate(
        """() => {
            for (const el of document.querySelectorAll('[data-testid="approval-card"]')) el.__tag = 'original';
            window.__mutations = {added: 0, removed: 0};
            new MutationObserver((records) => {
                for (const r of records) {
                    window.__mutations.added += r.addedNodes.length;
                    window.__mutations.removed += r.removedNodes.length;
                }
            }).observe(document.querySelector('[data-testid="card-list"]'), {childList: true});
        }"""
    )
    gone = cards[250]["id"]
    inbox.remove(gone, status="approved", decided_by="alice")
    expect(inbox.card(gone)).to_have_count(0)

    expect(inbox.cards()).to_have_count(499)
    untouched = inbox.page.evaluate(
        """() => Array.from(document.querySelectorAll('[data-testid="approval-card"]')).every(el => el.__tag === 'original')"""
    )
    assert untouched, "other cards were re-created"
    assert inbox.page.evaluate("window.__mutations") == {"added": 0, "removed": 1}

    changed = cards[10]["id"]
    inbox.rows.claim(changed, "bob")
    inbox.update(changed)
    expect(inbox.card(changed).get_by_test_id("card-claim")).to_have_text("bob is reviewing")
    assert inbox.page.evaluate("window.__mutations") == {"added": 0, "removed": 1}


def test_reconnect_after_the_socket_closes_gets_a_new_snapshot(inbox):
    kept, vanished = approval_card(tier="high"), approval_card(tier="low")
    inbox.open([kept, vanished])

    # The server's pending set changes with no push reaching the page (it is about to drop).
    arrived = approval_card(tier="high", expires_in=60)
    inbox.rows.decide(vanished["id"], "approved", "alice")
    inbox.keep(arrived)
    inbox.drop_connection()
    expect(inbox.connection).to_have_attribute("data-state", "reconnecting")
    expect(inbox.connection).to_have_text("Reconnecting…")
    expect(inbox.page.get_by_test_id("stale-notice")).to_be_visible()

    inbox.wait_for_connections(2)
    expect(inbox.connection).to_have_attribute("data-state", "live")
    expect(inbox.cards()).to_have_count(2)
    assert inbox.displayed_ids() == [arrived["id"], kept["id"]]
    expect(inbox.page.get_by_test_id("stale-notice")).to_be_hidden()


def test_reconnect_keeps_what_the_reviewer_was_typing(inbox):
    card = approval_card()
    inbox.open([card])
    inbox.card(card["id"]).get_by_test_id("reject").click()
    inbox.card(card["id"]).get_by_test_id("reject-reason").fill("Half-written reason")

    inbox.drop_connection()
    inbox.wait_for_connections(2)
    expect(inbox.connection).to_have_attribute("data-state", "live")

    expect(inbox.card(card["id"]).get_by_test_id("reject-reason")).to_have_value("Half-written reason")


# --------------------------------------------------------------------------- login


def test_login_page_shows_errors_and_keeps_next(page):
    from django import forms

    class LoginForm(forms.Form):
        username = forms.CharField()
        password = forms.CharField(widget=forms.PasswordInput)

    form = LoginForm(data={"username": "rita", "password": "wrong"})
    form.is_valid()
    form.add_error(None, "Please enter a correct username and password.")
    html = render_template("registration/login.html", {"form": form, "next": "/inbox/", "user": None})
    page.set_content(html)

    expect(page.get_by_test_id("login-errors")).to_have_text("Please enter a correct username and password.")
    expect(page.get_by_label("Username")).to_have_value("rita")
    expect(page.get_by_label("Password")).to_have_value("")
    expect(page.locator('input[type="hidden"][name="next"]')).to_have_value("/inbox/")
    expect(page.locator('input[name="csrfmiddlewaretoken"]')).to_have_value(CSRF_TOKEN)
