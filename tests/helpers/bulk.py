"""Pending approvals by the thousand, written straight to the database: enough to page through."""

from datetime import timedelta

from django.utils import timezone

from approvals import bound_context
from approvals.models import Approval
from runs.models import Run
from sessions_app.models import Session
from tests.helpers.approval_loop import PRESCRIPTION


def pending_cards_in_bulk(
    client,
    count: int,
    *,
    care_unit: str = "",
    tiers=("high", "low", None),
    args=None,
    escalate_every: int = 0,
    patient_ref: str | None = None,
    tool: str = "prescribe_medication",
) -> list[Approval]:
    """`count` pending approvals (no gate call each), one run per ten, with a mix of tiers and
    deadlines, some escalated; each ten for patient MRN-<n>, unless all for `patient_ref`."""
    now = timezone.now()
    rows = []
    for start in range(0, count, 10):
        session = Session.objects.create(
            client=client, title=f"bulk {start}", patient_ref=patient_ref or f"MRN-{start}", care_unit=care_unit
        )
        run = Run.objects.create(
            session=session, autonomy="guarded", state="suspended", last_activity_at=now, suspended_at=now
        )
        for n in range(start, min(count, start + 10)):
            rows.append(
                Approval(
                    run=run,
                    session=session,
                    client=client,
                    tool=tool,
                    op="create",
                    bound_context=bound_context.of(session),
                    tool_call_id=f"call-{n}",
                    step_id=f"step-{n}",
                    contract_hash=f"{n:064d}",
                    reason_code="approval",
                    rule_id="bulk",
                    hitl_tier=tiers[n % len(tiers)],
                    args=PRESCRIPTION if args is None else args,
                    payload_hash="0" * 64,
                    requested_at=now,
                    expires_at=now + timedelta(seconds=600 + (n * 7919) % 3000),
                    escalated_at=now if escalate_every and n % escalate_every == 0 else None,
                )
            )
    return Approval.objects.bulk_create(rows)
