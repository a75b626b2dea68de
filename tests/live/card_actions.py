"""What a reviewer does on an inbox card, a few clicks at a time: on the harness's page and
on the live one alike (a card is a Playwright locator in both)."""

from __future__ import annotations

from playwright.sync_api import expect


def reject(card, reason: str, *, opener: str = "reject", submit: str = "reject-submit") -> None:
    """Open the reason panel with `opener` (reject, or decline a question), give `reason`, press `submit`
    (reject-stop-submit: reject and stop the run)."""
    card.get_by_test_id(opener).click()
    card.get_by_test_id("reject-reason").fill(reason)
    card.get_by_test_id(submit).click()


def reason_is_required(card, reason: str) -> None:
    """In the open reason panel: the reason has focus, blank cannot be sent, `reason` can and is."""
    box, submit = card.get_by_test_id("reject-reason"), card.get_by_test_id("reject-submit")
    expect(box).to_be_focused()
    expect(submit).to_be_disabled()
    box.fill("   ")
    expect(submit).to_be_disabled()
    box.fill(reason)
    expect(submit).to_be_enabled()
    submit.click()


def assert_kept_for_another_try(card, error: str, field: str, typed: str, submit: str) -> None:
    """A refused or failed decision: the card says `error`, keeps what was `typed` in `field`, and
    `submit` can send it again."""
    expect(card.get_by_test_id("card-error")).to_contain_text(error)
    expect(card.get_by_test_id(field)).to_have_value(typed)
    expect(card.get_by_test_id(submit)).to_be_enabled()


def assert_decided(inbox, card, body: dict, said: str) -> None:
    """The page sent one decision, `body`; the card left and the page says `said`."""
    assert inbox.wait_for_decisions(1)[0].body == body
    expect(card).to_have_count(0)
    expect(inbox.feedback).to_contain_text(said)
