"""Reporting a tool's result: stored once, framed for the stream, and tainting when untrusted."""

from django.db import transaction
from django.utils import timezone

from approvals import audit
from approvals.models import Approval, ToolCall
from approvals.models.approval import OPEN_STATUSES
from approvals.suspend import GATEABLE_STATES
from condor.errors import ApprovalPending, CondorError, NotFound, RunNotActiveError
from runs import frames, spine
from runs.outbox import record_event


class ToolResultAlreadyReported(CondorError):
    status, code = 409, "tool_result_already_reported"
    default_detail = "A result for this tool call was already reported."


@transaction.atomic(durable=True)
def report_result(run_id, tool_call_id: str, *, output, is_error: bool, untrusted: bool,
                  entities: list, cards: list, client) -> tuple[ToolCall, bool]:
    """Store the result of a gated call. Returns (call, whether the session is now tainted)."""
    run = spine.lock_run(run_id)
    if run.state not in GATEABLE_STATES:
        raise RunNotActiveError(f"The run is {run.state}; results are accepted only while it is active.")
    call = ToolCall.objects.select_for_update().filter(run=run, tool_call_id=tool_call_id).first()
    if call is None:
        raise NotFound("No gated tool call with this id on this run.")
    if call.reported_at is not None:
        raise ToolResultAlreadyReported()
    # A parked call's approval request must stay the last frame for its toolCallId
    # until the approval is used (SPEC section 5): a result before that is refused.
    if Approval.objects.filter(run=run, tool_call_id=tool_call_id, status__in=OPEN_STATUSES).exists():
        raise ApprovalPending("This call is still waiting on its approval; resume the run before reporting.")
    call.output, call.is_error, call.untrusted_result = output, is_error, untrusted
    call.entities, call.cards, call.reported_at = entities, cards, timezone.now()
    call.save()
    record_event(run, "tool.result", step_id=call.step_id,
                 frames=frames.result_frames(tool_call_id, output, is_error=is_error),
                 data={"tool_call_id": tool_call_id, "is_error": is_error})
    # Taint is monotone: untrusted content, once in the session, marks it for good.
    if (call.untrusted_tool or untrusted) and run.session.mark_tainted():
        audit.record(audit.Kind.TAINT, run=run, actor_client=client, tool=call.tool, decision="tainted",
                     data={"tool_call_id": tool_call_id,
                           "cause": "untrusted tool" if call.untrusted_tool else "result marked untrusted"})
    spine.touch(run.pk)
    return call, run.session.tainted
