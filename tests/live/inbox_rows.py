"""The inbox's server side, in memory: approval rows, and what the real server code makes of them.

The browser harness (tests/live/inbox_harness.py) plays the server without a database,
but nothing it sends is written by hand:

* a card is approvals/cards.py over an unsaved Approval row (with its unsaved Session,
  ApiClient and reviewers), filled in as the gate fills one in: rule, explanation and
  tier from the policy engine (registry/policy), resume schema and contract hash from
  approvals/suspend.py's SuspendRequest, payload hash from core/hashing.py, quorum
  from the tool's descriptor;
* websocket messages are cards.added / updated / removed and the snapshot's pages
  (inbox/pages.py's cursor and frame assembly over these rows), which are
  also what the polling endpoint answers;
* a decision changes the row through the model's own transitions and quorum.count, and
  is answered with ApprovalSerializer; a refusal is a core.errors exception through
  the API's exception handler.

The builder asks the database two things (a run's grants, a call's context); `Rows`
answers them from the rows it holds, so a change to the card's shape, the rules or
the error bodies on the server shows up in the browser tests.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections import Counter, defaultdict
from contextlib import contextmanager
from datetime import datetime, timedelta
from unittest import mock

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import Http404
from django.test import RequestFactory
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from agents.models import ApiClient
from approvals import cards, claims, locked_args, quorum
from approvals.card_context import empty_context
from approvals.gate import CLARIFICATION_RULE, EXPLANATIONS
from approvals.models import Approval, ApprovalStatus
from approvals.serializers import ApprovalSerializer
from approvals.suspend import SuspendRequest
from core import identifiers
from core.error_pages import not_found
from core.errors import CondorError, exception_handler
from core.hashing import canonical, payload_hash
from inbox import pages as inbox_pages
from inbox import search as inbox_search
from registry.policy import Context, Decision, ToolCall, ToolSpec, effective_spec, evaluate
from runs.models import Run
from runs.serializers import RunSerializer
from runs.states import RunState, TerminalReason
from sessions_app.models import Session

_seq = itertools.count(1)
_reviewer_ids: dict[str, int] = {}


def reviewer(username: str):
    """An unsaved user with a stable id per name, enough for the card's claimed_by / decided_by."""
    pk = _reviewer_ids.setdefault(username, 1000 + len(_reviewer_ids))
    return get_user_model()(pk=pk, username=username)


class Card(dict):
    """A card as approvals/cards.py built it when it was made; `.row` is the Approval behind it.

    Tests read its fields (id, run_id, session, ...); the harness sends what the row
    says at the time, built again, never this dict.
    """

    def __init__(self, data: dict, row: Approval, context: dict):
        super().__init__(data)
        self.row, self.context = row, context


def _session(*, title, patient_ref, client, care_unit, autonomy, age_band, consent, tainted) -> Session:
    session = Session(
        title=title,
        patient_ref=patient_ref,
        care_unit=care_unit,
        autonomy=autonomy,
        age_band=age_band,
        consent=consent,
        client=ApiClient(name=client),
    )
    session.tainted = tainted  # not editable: the server sets it only from an untrusted result
    return session


def _park(
    request: SuspendRequest,
    session: Session,
    *,
    run_id,
    expires_in: float,
    approvals_required: int,
    now: datetime | None = None,
) -> Approval:
    """The row approvals/suspend.py's persist_suspend creates for `request` at `now`, unsaved."""
    now = now or timezone.now()
    return Approval(
        run_id=uuid.UUID(str(run_id)) if run_id else uuid.uuid4(),
        session=session,
        client=session.client,
        tool=request.tool,
        op=request.op,
        bound_context={"patient_ref": session.patient_ref, "age_band": session.age_band, "consent": session.consent},
        tool_call_id=request.tool_call_id,
        step_id=request.step_id,
        contract_hash=request.contract_hash,
        reason_code=request.reason_code,
        rule_id=request.rule_id,
        explanation=request.explanation,
        hitl_tier=request.hitl_tier,
        message=request.message,
        args=request.args,
        payload_hash=payload_hash(request.args),
        resume_schema=request.resume_schema(),
        locked_args=locked_args.card_paths(
            request.args, identity_args=request.identity_args, patient_ref=session.patient_ref
        ),
        approvals_required=approvals_required,
        requested_at=now - timedelta(seconds=30),
        expires_at=now + timedelta(seconds=expires_in),
    )


def _context(*, autonomy: str, rationale: str | None, tainted_by: str | None, turn: dict | None = None) -> dict:
    """What approvals/card_context.py reads from the call's ledger row and the session's messages."""
    taint = {"tool": tainted_by, "at": (timezone.now() - timedelta(minutes=5)).isoformat()} if tainted_by else None
    return {**empty_context(), "rationale": rationale, "turn": turn, "autonomy": autonomy, "tainted_by": taint}


def conversation_turn(user: str | None = None, agent: str | None = None, *, minutes_ago: float = 3) -> dict:
    """A card's `turn` as sessions_app/turns.py reads it: the user's message, then the agent's, minutes before."""
    at = timezone.now() - timedelta(minutes=minutes_ago)

    def said(text, later):
        return {"text": text, "at": (at + timedelta(seconds=later)).isoformat(), "cut": False} if text else None

    return {"user": said(user, 0), "agent": said(agent, 20)}


def _card(
    row: Approval, context: dict, *, claimed_by: str | None, claim_seconds: float | None, now: datetime | None = None
) -> Card:
    rows = Rows()
    rows.keep(row, context)
    if claimed_by:
        rows.claim(str(row.pk), claimed_by, seconds=claim_seconds, now=now)
    with rows.answering():
        return Card(cards.card(row), row, context)


def approval_card(
    *,
    tier: str | None = "low",
    expires_in: float = 600,
    tool: str = "ehr.medication_order",
    op: str = "create",
    args: dict | None = None,
    policy_class: str = "mutate",
    patient_ref: str | None = None,
    title: str = "Ward 7 discharge planning",
    client: str = "discharge-agent",
    care_unit: str = "",
    run_id: str | None = None,
    autonomy: str = "guarded",
    age_band: str = "adult",
    consent: bool = True,
    tainted_by: str | None = None,
    rationale: str | None = None,
    turn: dict | None = None,
    claimed_by: str | None = None,
    claim_seconds: float | None = None,
    now: datetime | None = None,
    identity_args: tuple = (),
) -> Card:
    """A pending approval as the gate parks it: `tier` is the tool's declared tier in the registry
    (`identity_args`: its registry row's, the args besides patient_ref, patient_id and mrn an edit may not change).

    The policy engine decides the rule, the explanation and the card's tier (a
    destructive op is high whatever the tool says); a call it would not park is refused.
    """
    n = next(_seq)
    if not identifiers.TOOL_NAME_RE.fullmatch(tool) or not identifiers.TOOL_NAME_RE.fullmatch(op):
        raise ValueError(f"the API refuses tool {tool!r} / op {op!r} before the gate")
    args = (
        args if args is not None else {"drug": "amoxicillin", "dose_mg": 500, "route": "oral", "frequency": "8-hourly"}
    )
    session = _session(
        title=title,
        patient_ref=patient_ref or f"MRN-{40000 + n}",
        client=client,
        care_unit=care_unit,
        autonomy=autonomy,
        age_band=age_band,
        consent=consent,
        tainted=tainted_by is not None,
    )
    registered = ToolSpec(tool, policy_class, tier, identity_args=identity_args)
    verdict = evaluate(ToolCall(tool, op, args), Context(autonomy, session.tainted, consent, age_band), registered)
    if verdict.decision != Decision.REQUIRE_APPROVAL:
        raise ValueError(f"the gate would not park {tool} · {op}: {verdict.rule_id}")
    request = SuspendRequest(
        tool_call_id=f"call_{n:04d}",
        step_id=f"step-{n}",
        tool=tool,
        op=op,
        args=args,
        rule_id=verdict.rule_id,
        explanation=verdict.explanation,
        hitl_tier=verdict.effective_tier,
        identity_args=identity_args,
    )
    row = _park(
        request,
        session,
        run_id=run_id,
        expires_in=expires_in,
        approvals_required=effective_spec(tool, registered).approvals_required,
        now=now,
    )
    return _card(
        row,
        _context(autonomy=autonomy, rationale=rationale, tainted_by=tainted_by, turn=turn),
        claimed_by=claimed_by,
        claim_seconds=claim_seconds,
        now=now,
    )


# The agent's missing fields, one of every kind the inbox renders (hints: approvals/resume_schemas.py).
FOLLOW_UP_FIELDS = [
    {"name": "clinic", "hint": {"label": "Clinic", "options": ["cardiology", "renal", "diabetes"]}},
    {
        "name": "urgency",
        "hint": {
            "label": "Urgency",
            "radio": True,
            "options": [
                {"value": "routine", "label": "Routine"},
                {"value": "soon", "label": "Within 2 weeks"},
                {"value": "urgent", "label": "Urgent"},
            ],
        },
    },
    {
        "name": "tests",
        "type": "array",
        "hint": {
            "label": "Tests before the visit",
            "required": False,
            "options": [
                {"value": "ecg", "label": "ECG"},
                {"value": "echo", "label": "Echocardiogram"},
                {"value": "bloods", "label": "Bloods (U&E)"},
            ],
        },
    },
    {"name": "visit_date", "type": "date", "hint": {"label": "Visit date", "min": "2030-01-01", "max": "2030-03-31"}},
    {"name": "notes", "hint": {"label": "Notes for the clinic", "textarea": True, "required": False}},
    {"name": "duration_min", "type": "integer", "hint": {"label": "Duration (minutes)", "min": 10, "max": 60}},
    {"name": "interpreter", "type": "boolean", "hint": {"label": "Interpreter needed", "required": False}},
]


def clarification_card(
    *,
    message: str = "Which follow-up should be booked?",
    missing: list[dict] | None = None,
    tool: str = "scheduling.book_followup",
    op: str = "create",
    args: dict | None = None,
    expires_in: float = 600,
    patient_ref: str | None = None,
    title: str = "Heart failure follow-up",
    client: str = "clinic-scheduler",
    care_unit: str = "",
    run_id: str | None = None,
    turn: dict | None = None,
) -> Card:
    """A question parked as approvals/gate.py's request_clarification parks it; the form comes from `missing`."""
    n = next(_seq)
    session = _session(
        title=title,
        patient_ref=patient_ref or f"MRN-{40000 + n}",
        client=client,
        care_unit=care_unit,
        autonomy="guarded",
        age_band="adult",
        consent=True,
        tainted=False,
    )
    request = SuspendRequest(
        tool_call_id=f"call_{n:04d}",
        step_id=f"step-{n}",
        tool=tool,
        op=op,
        args=args if args is not None else {"clinic": "cardiology"},
        kind="clarification",
        message=message,
        missing=tuple(missing or FOLLOW_UP_FIELDS),
        rule_id=CLARIFICATION_RULE,
        explanation=EXPLANATIONS[CLARIFICATION_RULE],
        hitl_tier=None,
    )
    row = _park(request, session, run_id=run_id, expires_in=expires_in, approvals_required=1)
    return _card(
        row,
        _context(autonomy="guarded", rationale=None, tainted_by=None, turn=turn),
        claimed_by=None,
        claim_seconds=None,
    )


def error_response(exc: Exception) -> tuple[int, dict]:
    """(status, body) the API answers `exc` with: core/errors.py's exception handler, as DRF calls it."""
    response = exception_handler(exc, {})
    if response is None:
        raise TypeError(f"{exc!r} is not an error the API maps (it would be a 500)")
    return response.status_code, json.loads(JSONRenderer().render(response.data))


def approval_body(row: Approval) -> dict:
    """GET approvals/{id}/ and a decision's 200: ApprovalSerializer, rendered as the API renders it."""
    return json.loads(JSONRenderer().render(ApprovalSerializer(row).data))


def card_page(rows: Rows, cursor: str | None) -> tuple[int, dict]:
    """(status, body) of GET inbox/cards/?cursor=: inbox/card_views.py answers inbox_pages.page,
    or a bad cursor's 400, rendered as the API renders them."""
    try:
        body = rows.page(cursor)
    except CondorError as refused:
        return error_response(refused)
    return 200, json.loads(JSONRenderer().render(body))


def search_page(rows: Rows, params: dict) -> tuple[int, dict]:
    """(status, body) of GET inbox/cards/ with a search or filters: inbox/search.py's page,
    or its 400, rendered as the API renders them."""
    try:
        body = rows.search(params)
    except CondorError as refused:
        return error_response(refused)
    return 200, json.loads(JSONRenderer().render(body))


def unrouted_response(path: str):
    """What a path no route matches gets: core/errors.py's handler404 (a JSON error under /api/)."""
    return not_found(RequestFactory().get(path), Http404())


def stopped_run_body(row: Approval, state=RunState.ABORTED, reason=TerminalReason.USER_STOPPED) -> dict:
    """POST runs/{id}/stop/'s 200: RunSerializer over `row`'s run as runs/spine.py's stop leaves it (or,
    for a run that had already ended, returns it: `state` and `reason`)."""
    now = timezone.now()
    run = Run(
        pk=row.run_id,
        session=row.session,
        autonomy=row.session.autonomy,
        state=state,
        terminal_reason=reason,
        last_activity_at=now,
        closed_at=now,
    )
    return json.loads(JSONRenderer().render(RunSerializer(run).data))


def _queue_position(row: Approval) -> tuple:
    return row.escalation_rank, row.risk_rank, row.expires_at, str(row.pk)


def queue_key(card: dict) -> tuple:
    """A card's place in the server's queue order (inbox/pages.py): escalated, risk, deadline, id."""
    return (
        0 if card.get("escalated_at") else 1,
        {"high": 0, "low": 1}.get(card.get("hitl_tier"), 2),
        datetime.fromisoformat(card["expires_at"]),
        card["id"],
    )


class Rows:
    """The approvals the harness's server holds, and the two queries the card builder makes over them."""

    def __init__(self) -> None:
        self.by_id: dict[str, Approval] = {}
        self.contexts: dict[tuple, dict] = {}

    def keep(self, row: Approval, context: dict) -> None:
        self.by_id[str(row.pk)] = row
        self.contexts[(row.run_id, row.tool_call_id)] = context

    def pending(self) -> list[Approval]:
        """approvals/visibility.py's pending_approvals: pending, not past due, soonest deadline first."""
        now = timezone.now()
        return sorted(
            (row for row in self.by_id.values() if row.status == ApprovalStatus.PENDING and row.expires_at > now),
            key=lambda row: (row.expires_at, str(row.pk)),
        )

    def granted_in_runs(self, run_ids) -> dict:
        """cards.granted_in_runs over these rows: approved, unexpired grants by decision time."""
        now = timezone.now()
        granted = defaultdict(list)
        held = sorted(
            (
                row
                for row in self.by_id.values()
                if row.status == ApprovalStatus.APPROVED and row.expires_at > now and row.run_id in set(run_ids)
            ),
            key=lambda row: row.decided_at,
        )
        for row in held:
            granted[row.run_id].append(cards.sibling(row))
        return granted

    def contexts_for(self, approvals) -> dict:
        return {(a.run_id, a.tool_call_id): self.contexts[(a.run_id, a.tool_call_id)] for a in approvals}

    @contextmanager
    def answering(self):
        """The card builder's queries answered from these rows instead of the database."""
        with (
            mock.patch.object(cards, "granted_in_runs", self.granted_in_runs),
            mock.patch.object(cards, "contexts_for", self.contexts_for),
        ):
            yield

    # ---- what the socket sends

    def page(self, cursor: str | None = None, *, whole: bool = False) -> dict:
        """inbox/pages.page over these rows: the same order, cursor and frame assembly."""
        key = inbox_pages.decode_cursor(cursor) if cursor is not None else None
        rows = self.pending()
        for row in rows:  # the annotations of inbox_pages.queue_ordered (ESCALATION_RANK, RISK_RANK)
            row.escalation_rank = 0 if row.escalated_at else 1
            row.risk_rank = {"high": 0, "low": 1}.get(row.hitl_tier, 2)
        ordered = sorted(rows, key=_queue_position)
        if key is not None:
            ordered = [row for row in ordered if _queue_position(row) > (*key[:3], str(key[3]))]
        with self.answering():
            if whole:  # every pending card in one frame, whatever its size (see InboxHarness.whole_snapshot)
                return inbox_pages.page_body(
                    ordered,
                    total=len(rows),
                    cursor=cursor,
                    page_cards=len(ordered),
                    max_bytes=len(ordered) * inbox_pages.PAGE_MAX_BYTES,
                )
            return inbox_pages.page_body(ordered[: inbox_pages.PAGE_CARDS + 1], total=len(rows), cursor=cursor)

    def total(self) -> int:
        return len(self.pending())

    def search(self, params: dict) -> dict:
        """inbox/search.py's page over these rows: its filters parsed by the server's code,
        what the database matches said again in Python, its order, cursor and per-patient counts."""
        filters = inbox_search.parse(params)
        cursor = params.get("cursor")
        key = inbox_search.decode_cursor(filters, cursor) if cursor is not None else None
        wanted = filters.patient_ref.casefold()
        matched = [
            row
            for row in self.pending()
            if row.session.patient_ref.casefold().startswith(wanted)
            and (not filters.ward or row.session.care_unit == filters.ward)
            and (not filters.tool or row.tool == filters.tool)
            and (not filters.risk or {"high": 0, "low": 1}.get(row.hitl_tier, 2) == inbox_search.RISKS[filters.risk])
        ]
        for row in matched:
            row.match_rank = 0 if wanted and row.session.patient_ref.casefold() == wanted else 1
            row.escalation_rank = 0 if row.escalated_at else 1
            row.risk_rank = {"high": 0, "low": 1}.get(row.hitl_tier, 2)
        position = lambda row: (row.match_rank, *_queue_position(row))  # noqa: E731
        ordered = sorted(matched, key=position)
        if key is not None:
            ordered = [row for row in ordered if position(row) > (*key[:4], str(key[4]))]
        with self.answering():
            body = inbox_pages.page_body(
                ordered[: inbox_pages.PAGE_CARDS + 1],
                total=len(matched),
                cursor=cursor,
                encode=inbox_search.cursor_encoder(filters),
                key=lambda row: (row.match_rank, row.escalation_rank, row.risk_rank, row.expires_at, row.pk),
            )
        refs = {card["session"]["patient_ref"] for card in body["cards"]}
        totals = {ref: sum(row.session.patient_ref == ref for row in matched) for ref in sorted(refs)}
        return {"patient_totals": totals, **body}

    def filter_options(self) -> dict:
        """inbox/search.py's options over these rows: the wards and tools with pending cards."""

        def counted(values) -> list[dict]:
            return [{"value": value, "count": n} for value, n in sorted(Counter(v for v in values if v).items())]

        pending = self.pending()
        return {
            "wards": counted(row.session.care_unit for row in pending),
            "tools": counted(row.tool for row in pending),
        }

    def added(self, approval_id: str) -> dict:
        with self.answering():
            return cards.added(self.by_id[approval_id])

    def updated(self, approval_id: str) -> dict:
        with self.answering():
            return cards.updated(self.by_id[approval_id])

    def removed(self, approval_id: str) -> dict:
        return cards.removed(self.by_id[approval_id])

    def withdrawn(self, approval_id: str, cause: str, stopped_by: str | None) -> dict:
        return cards.withdrawn(self.by_id[approval_id], cause=cause, stopped_by=stopped_by)

    # ---- what happens to a row

    def claim(self, approval_id: str, by: str, *, seconds: float | None = None, now: datetime | None = None) -> None:
        """The row as approvals/claims.py's claim at `now` leaves it (held CONDOR_CLAIM_TTL_SECONDS unless `seconds`)."""
        row = self.by_id[approval_id]
        row.claimed_by = reviewer(by)
        row.claim_expires_at = (now or timezone.now()) + timedelta(seconds=seconds or settings.CONDOR_CLAIM_TTL_SECONDS)

    def release(self, approval_id: str) -> None:
        claims.end_claim(self.by_id[approval_id])

    def escalate(self, approval_id: str) -> None:
        self.by_id[approval_id].escalated_at = timezone.now()  # approvals/escalation.py, once per card

    def decide(
        self, approval_id: str, status: str, by: str | None, *, reason: str = "", edited_args=None, values=None
    ) -> bool:
        """Move the row on as approvals/decisions.py does; False while a four-eyes quorum is still short.

        Raises the server's error where it would refuse (another's claim, a second approval by the same reviewer).
        """
        row, now = self.by_id[approval_id], timezone.now()
        if status in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED):
            claims.refuse_if_claimed_by_other(row, reviewer(by), now)
        if status == ApprovalStatus.APPROVED:
            user = reviewer(by)
            if edited_args is not None:
                locked_args.refuse_retargeting(
                    row.args, edited_args, patient_ref=row.bound_context["patient_ref"], card_locked=row.locked_args
                )
            proposed = edited_args if edited_args is not None else quorum.proposal(row)
            approved = canonical(proposed)
            if not quorum.count(row, user=user, approved=approved, reason=reason, now=now):
                return False
            row.approve(
                by=user,
                at=now,
                approved_args=proposed,
                payload_hash=approved.hash,
                expires_at=now + timedelta(seconds=settings.CONDOR_APPROVAL_TTL_SECONDS),
                resume_data=values,
                reason=reason,
            )
        elif status == ApprovalStatus.REJECTED:
            row.reject(by=reviewer(by), at=now, reason=reason)
        elif status in (ApprovalStatus.EXPIRED, ApprovalStatus.WITHDRAWN):
            row.status = status  # approvals/expiry.py sets it with a conditional UPDATE
        elif status == ApprovalStatus.CONSUMED:
            row.status, row.consumed_at = ApprovalStatus.CONSUMED, now  # approvals/resume.py, likewise
        else:
            raise ValueError(f"no way for an approval to become {status!r}")
        return True
