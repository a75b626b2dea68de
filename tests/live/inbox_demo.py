"""A realistic inbox for screenshots and manual review, in the browser harness.

.venv/bin/python -m tests.live.inbox_demo test-artifacts/inbox.png
.venv/bin/python -m tests.live.inbox_demo --docs      # docs/inbox-desktop.png
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

if __name__ == "__main__":  # pragma: no cover - run by hand: the project's settings, as under pytest
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
    django.setup()

from tests.live.browser import ARTIFACTS_DIR, launch_chromium
from tests.live.inbox_harness import InboxHarness
from tests.live.inbox_rows import Card, approval_card, clarification_card, conversation_turn


def demo_cards() -> list[Card]:
    """Six varied cards for screenshots and manual review (the first says why, with its conversation)."""
    return [
        approval_card(
            tier="high",
            expires_in=45,
            tool="ehr.medication_order",
            op="create",
            patient_ref="MRN-20417",
            title="Sepsis pathway — bay 3",
            client="sepsis-agent",
            care_unit="ICU",
            tainted_by="web_search",
            rationale="eGFR fell from 61 to 48 overnight; the renal protocol asks for a once-daily dose by weight.",
            turn=conversation_turn(
                "Blood cultures are positive in bay 3. Start the sepsis pathway antibiotics.",
                "Her eGFR is 48 this morning, so I will use the once-daily renal regimen of "
                "gentamicin at 5 mg/kg for her 72.4 kg.",
            ),
            args={
                "drug": "gentamicin",
                "dose_mg_per_kg": 5,
                "route": "IV",
                "frequency": "once daily",
                "weight_kg": 72.4,
                "renal_function": {"egfr": 48, "measured": "2030-01-14"},
            },
        ),
        approval_card(
            tier="low",
            expires_in=540,
            tool="ehr.allergy_record",
            op="delete",
            patient_ref="MRN-33108",
            title="Medicines reconciliation",
            client="pharmacy-agent",
            args={
                "allergy_id": "AL-99812",
                "substance": "penicillin",
                "reason": "Recorded in error — tolerated amoxicillin 2029",
            },
        ),
        clarification_card(
            patient_ref="MRN-11873",
            title="Heart failure follow-up",
            client="clinic-scheduler",
            message="Which clinic and date should the follow-up be booked for?",
            expires_in=1500,
        ),
        approval_card(
            policy_class="comms",
            tier=None,
            expires_in=880,
            tool="send_email",
            op="send",
            patient_ref="MRN-11873",
            title="Heart failure follow-up",
            client="clinic-scheduler",
            args={"to": "reception@clinic.example", "template": "discharge_summary_v3", "attachments": ["summary.pdf"]},
        ),
        approval_card(
            tier="low",
            expires_in=3900,
            tool="lab.order_panel",
            op="create",
            patient_ref="MRN-50221",
            title="Diabetes annual review",
            client="primary-care-agent",
            args={"panel": "HbA1c", "priority": "routine", "collect_by": "2030-02-01"},
        ),
        approval_card(
            tier=None,
            expires_in=1200,
            tool="notes.append",
            op="update",
            patient_ref="MRN-50221",
            title="Diabetes annual review",
            client="primary-care-agent",
            tainted_by="parse_uploaded_document",
            args={"note_id": "N-4471", "text": "Patient reports <b>no</b> hypos since last review."},
        ),
    ]


def save_demo_screenshot(
    path: str | Path,
    *,
    width: int = 1240,
    height: int = 1900,
    view: str = "full",
    setup: Callable | None = None,
    full_page: bool = True,
) -> Path:
    """The demo cards in `view` ("full" or "queue"), after `setup(harness, cards)`, as a PNG at `path`."""
    from playwright.sync_api import sync_playwright

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            harness = InboxHarness(page, view=view)
            cards = demo_cards()
            harness.open(cards)
            if setup is not None:
                setup(harness, cards)
            harness.frames_taken()
            page.screenshot(path=str(path), full_page=full_page)
        finally:
            browser.close()
    return path


def open_first_line(harness: InboxHarness, cards: list[Card]) -> None:
    """Open the queue's first line, as a reviewer starting a shift would."""
    harness.page.get_by_test_id("queue-row").first.click()
    harness.card(cards[0]["id"]).wait_for()
    harness.page.evaluate("window.scrollTo(0, 0)")  # from the page's head, as it opened


if __name__ == "__main__":  # pragma: no cover - manual tool
    if sys.argv[1:2] == ["--docs"]:  # the desktop picture the README links, at 1440 x 900
        print(
            save_demo_screenshot(
                Path("docs/inbox-desktop.png"),
                width=1440,
                height=900,
                view="queue",
                setup=open_first_line,
                full_page=False,
            )
        )
    else:
        print(save_demo_screenshot(sys.argv[1] if len(sys.argv) > 1 else ARTIFACTS_DIR / "inbox.png"))
