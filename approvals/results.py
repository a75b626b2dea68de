"""Reporting a tool's result: stored once, framed for the stream, and tainting when untrusted."""

from django.db import transaction
from django.utils import timezone

from approvals.models import Approval, ToolCall
from approvals.models.approval import OPEN_STATUSES
from approvals.suspend import GATEABLE_STATES
from audit import trail as audit
from core.errors import (
    ApprovalPending,
    NotFound,
    RunNotActiveError,
    ToolCallNotAllowed,
    ToolResultAlreadyReported,
)
from core.hashing import payload_hash
from registry.policy import Decision
from runs import frames, spine
from runs.outbox import record_event
from sessions_app.entities import promote_latest
from sessions_app.models import Session
from sessions_app.pinned_cards import record_reported


def report_result(
    run_id, tool_call_id: str, *, output, is_error: bool, untrusted: bool, entities: list, cards: list, client
) -> tuple[ToolCall, bool]:
    """Store the result of a gated call. Returns (call, whether the session is now tainted).

    Only a call that was allowed to run (straight away, by a prior grant, or by a
    consumed approval) has a result; anything else is refused, so the ledger and
    the stream never show an output for a call Condor did not let through. A result
    that comes after its run ended is refused too (409 run_not_active), but if it
    was untrusted its content reached the agent all the same, and the agent may go
    on in the session's next run: the session is tainted (SPEC 2), then it is refused.
    """
    try:
        return _store_result(
            run_id,
            tool_call_id,
            output=output,
            is_error=is_error,
            untrusted=untrusted,
            entities=entities,
            cards=cards,
            client=client,
        )
    except RunNotActiveError:
        _taint_for_late_result(run_id, tool_call_id, untrusted=untrusted, client=client)
        raise


def _lock_session_and_run(run_id):
    """The run, locked after its session. Lock order everywhere: session, then run, then approvals;
    tainting updates the session row, so it is locked first (opening a run locks it the same way)."""
    Session.objects.locked().filter(runs__pk=run_id).first()
    return spine.lock_run(run_id)


@transaction.atomic(durable=True)
def _taint_for_late_result(run_id, tool_call_id: str, *, untrusted: bool, client) -> None:
    run = _lock_session_and_run(run_id)
    call = ToolCall.objects.filter(run=run, tool_call_id=tool_call_id, decision=Decision.ALLOW).first()
    if call is not None and (call.untrusted_tool or untrusted):  # a call that ran: its result is real
        _taint(run, call, client=client, late=True)


def _taint(run, call: ToolCall, *, client, late: bool = False) -> None:
    """Taint is monotone: untrusted content, once in the session, marks it for good (audited once)."""
    if run.session.mark_tainted():
        cause = "untrusted tool" if call.untrusted_tool else "result marked untrusted"
        audit.record(
            audit.Kind.TAINT,
            run=run,
            actor_client=client,
            tool=call.tool,
            decision="tainted",
            data={
                "tool_call_id": call.tool_call_id,
                "cause": f"{cause}, reported after the run ended" if late else cause,
            },
        )


@transaction.atomic(durable=True)
def _store_result(
    run_id, tool_call_id: str, *, output, is_error: bool, untrusted: bool, entities: list, cards: list, client
) -> tuple[ToolCall, bool]:
    run = _lock_session_and_run(run_id)
    if run.state not in GATEABLE_STATES:
        raise RunNotActiveError(f"The run is {run.state}; results are accepted only while it is active.")
    call = ToolCall.objects.select_for_update().filter(run=run, tool_call_id=tool_call_id).first()
    if call is None:
        raise NotFound("No gated tool call with this id on this run.")
    if call.reported_at is not None:
        raise ToolResultAlreadyReported()
    if call.decision != Decision.ALLOW:
        # A parked call's approval request must stay the last frame for its toolCallId
        # until the approval is used (SPEC section 5).
        if Approval.objects.filter(run=run, tool_call_id=tool_call_id, status__in=OPEN_STATUSES).exists():
            raise ApprovalPending("This call is still waiting on its approval; resume the run before reporting.")
        raise ToolCallNotAllowed(f"This call was {call.decision} ({call.rule_id}); it has no result to report.")
    call.output, call.is_error, call.untrusted_result = output, is_error, untrusted
    call.entities, call.cards, call.reported_at = entities, cards, timezone.now()
    call.save()
    # Same transaction: a pin later in this very run finds the cards; a bad card or
    # entity refuses the whole result (400, nothing stored).
    record_reported(run.session_id, run.pk, tool_call_id, cards)
    promote_latest(run.session_id, run.pk, tool_call_id, entities)
    record_event(
        run,
        "tool.result",
        step_id=call.step_id,
        frames=frames.result_frames(tool_call_id, output, is_error=is_error),
        data={"tool_call_id": tool_call_id, "is_error": is_error},
    )
    # What the agent then did: the result's hash, not its content (it may be clinical data).
    audit.record(
        audit.Kind.RESULT,
        run=run,
        actor_client=client,
        tool=call.tool,
        op=call.op,
        decision="error" if is_error else "ok",
        rule_id=call.rule_id,
        data={
            "tool_call_id": tool_call_id,
            "step_id": call.step_id,
            "output_hash": payload_hash(output),
            "untrusted": bool(untrusted),
        },
    )
    if call.untrusted_tool or untrusted:
        _taint(run, call, client=client)
    spine.touch(run.pk)
    return call, run.session.tainted
