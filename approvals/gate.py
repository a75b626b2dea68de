"""The choke point: every tool call an agent wants to make is judged here.

Loads the descriptor and the session context, asks the pure policy engine,
records the verdict, then allows, blocks, honours a prior grant, or parks the
run through the suspend funnel.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from approvals import audit
from approvals.hashing import payload_hash
from approvals.models import Approval, ApprovalStatus, ToolCall, ToolDescriptor
from approvals.models.approval import OPEN_STATUSES
from approvals.policy import Context, Decision, Trust, Verdict, effective_spec, evaluate
from approvals.policy import ToolCall as PolicyCall
from approvals.suspend import GATEABLE_STATES, SuspendRequest, persist_suspend, suspend_frames
from condor.errors import RunNotActiveError
from runs import frames, spine
from runs.outbox import record_event
from runs.states import RunState

PRIOR_GRANT = "approval.prior-grant"
CANNOT_PARK = "client.cannot-park"
EXPLANATIONS = {
    PRIOR_GRANT: "A reviewer already approved exactly this call in this session, so it may run once.",
    CANNOT_PARK: "This call needs a clinician's approval, but the calling client cannot wait for one, so it is blocked.",
}


@dataclass(frozen=True)
class GateCall:
    tool_call_id: str
    step_id: str
    tool: str
    op: str
    args: dict
    metadata: dict


@dataclass(frozen=True)
class GateResult:
    status: int
    body: dict


def judge(run, call: GateCall) -> tuple[Verdict, bool]:
    """The verdict for `call` in `run`'s context, and whether the tool's output is untrusted."""
    session = run.session
    descriptor = ToolDescriptor.objects.filter(name=call.tool).first()
    registered = descriptor.to_spec() if descriptor is not None else None
    context = Context(
        autonomy=run.autonomy, tainted=session.tainted, consent=session.consent, age_band=session.age_band
    )
    verdict = evaluate(PolicyCall(tool=call.tool, op=call.op, args=call.args, metadata=call.metadata),
                       context, registered)
    spec = effective_spec(call.tool, registered)
    untrusted = spec is not None and spec.trust == Trust.UNTRUSTED
    return verdict, untrusted


def gate_tool_call(run, call: GateCall, *, client) -> GateResult:
    if run.state not in GATEABLE_STATES:
        raise RunNotActiveError(f"The run is {run.state}; tool calls are gated only while it executes.")
    verdict, untrusted = judge(run, call)
    if verdict.decision == Decision.REQUIRE_APPROVAL:
        grant = _consume_prior_grant(run, call, verdict, untrusted, client=client)
        if grant is not None:
            return grant
        if not client.can_park:
            return _settle(run, call, verdict, untrusted, client=client,
                           decision=Decision.BLOCKED, rule_id=CANNOT_PARK)
        return _park(run, call, verdict, untrusted, client=client)
    return _settle(run, call, verdict, untrusted, client=client,
                   decision=verdict.decision, rule_id=verdict.rule_id)


def _ledger(run, call: GateCall, *, decision: str, rule_id: str, untrusted: bool) -> None:
    ToolCall.objects.update_or_create(
        run=run, tool_call_id=call.tool_call_id,
        defaults={"step_id": call.step_id, "tool": call.tool, "op": call.op, "args": call.args,
                  "metadata": call.metadata, "decision": decision, "rule_id": rule_id,
                  "untrusted_tool": untrusted},
    )


def _audit_verdict(run, call: GateCall, verdict: Verdict, *, client, decision: str, rule_id: str) -> None:
    audit.record(
        audit.Kind.VERDICT, run=run, actor_client=client, tool=call.tool, decision=decision,
        rule_id=rule_id,
        data={"op": call.op, "tool_call_id": call.tool_call_id, "step_id": call.step_id,
              "policy_class": verdict.policy_class, "engine_rule_id": verdict.rule_id,
              "payload_hash": payload_hash(call.args), "client_metadata": call.metadata},
    )


def _locked_gateable_run(run_id):
    run = spine.lock_run(run_id)
    if run.state not in GATEABLE_STATES:
        raise RunNotActiveError(f"The run is {run.state}; tool calls are gated only while it executes.")
    return run


def _settle(run, call, verdict, untrusted, *, client, decision, rule_id) -> GateResult:
    """Allow or block straight away: ledger, event, audit and activity in one transaction."""
    explanation = EXPLANATIONS.get(rule_id, verdict.explanation)
    with transaction.atomic(durable=True):
        run = _locked_gateable_run(run.pk)
        _ledger(run, call, decision=decision, rule_id=rule_id, untrusted=untrusted)
        _audit_verdict(run, call, verdict, client=client, decision=decision, rule_id=rule_id)
        chunks = frames.allowed_call_frames(call.tool_call_id, call.tool, call.args)
        if decision == Decision.BLOCKED:
            chunks += frames.result_frames(call.tool_call_id, explanation, is_error=True)
        record_event(run, f"tool.{decision}", step_id=call.step_id, frames=chunks,
                     data={"tool_call_id": call.tool_call_id, "rule_id": rule_id})
        spine.touch(run.pk)
    return GateResult(200, {"decision": str(decision), "rule_id": rule_id, "explanation": explanation,
                            "tool_call_id": call.tool_call_id, "args": call.args})


def _consume_prior_grant(run, call, verdict, untrusted, *, client) -> GateResult | None:
    """Cold replay: an approved, unconsumed, unexpired grant in this session for this exact call."""
    digest = payload_hash(call.args)
    now = timezone.now()
    with transaction.atomic(durable=True):
        run = _locked_gateable_run(run.pk)
        candidates = Approval.objects.filter(
            session_id=run.session_id, tool=call.tool, payload_hash=digest,
            status=ApprovalStatus.APPROVED, expires_at__gt=now,
        ).order_by("decided_at")
        for grant in candidates:
            # The same conditional UPDATE as resume: only one caller can win a grant.
            won = Approval.objects.filter(
                pk=grant.pk, status=ApprovalStatus.APPROVED, payload_hash=digest, expires_at__gt=now
            ).update(status=ApprovalStatus.CONSUMED, consumed_at=now)
            if won:
                break
        else:
            return None
        grant.status, grant.consumed_at = ApprovalStatus.CONSUMED, now
        _ledger(run, call, decision=Decision.ALLOW, rule_id=PRIOR_GRANT, untrusted=untrusted)
        _audit_verdict(run, call, verdict, client=client, decision=Decision.ALLOW, rule_id=PRIOR_GRANT)
        audit.record(audit.Kind.CONSUME, approval=grant, actor_client=client, decision="consumed",
                     rule_id=PRIOR_GRANT, data={"run_id": str(run.pk)})
        record_event(run, "tool.allow", step_id=call.step_id,
                     frames=frames.allowed_call_frames(call.tool_call_id, call.tool, grant.approved_args),
                     data={"tool_call_id": call.tool_call_id, "rule_id": PRIOR_GRANT,
                           "approval_id": str(grant.pk)})
        if run.state == RunState.SUSPENDED and not Approval.objects.filter(
            run=run, status__in=OPEN_STATUSES
        ).exists():
            # The grant was this run's last open gate: using it unparks the run, as a resume would.
            spine._resume(run, step_id=call.step_id)
        else:
            spine.touch(run.pk)
    return GateResult(200, {"decision": str(Decision.ALLOW), "rule_id": PRIOR_GRANT,
                            "explanation": EXPLANATIONS[PRIOR_GRANT], "tool_call_id": call.tool_call_id,
                            "args": grant.approved_args, "approval_id": str(grant.pk)})


def _park(run, call, verdict, untrusted, *, client) -> GateResult:
    def ledger_and_verdict(locked_run):
        _ledger(locked_run, call, decision="suspended", rule_id=verdict.rule_id, untrusted=untrusted)
        _audit_verdict(locked_run, call, verdict, client=client, decision=Decision.REQUIRE_APPROVAL,
                       rule_id=verdict.rule_id)

    approval, _ = persist_suspend(run.pk, SuspendRequest(
        tool_call_id=call.tool_call_id, step_id=call.step_id, tool=call.tool, op=call.op, args=call.args,
        rule_id=verdict.rule_id, explanation=verdict.explanation, hitl_tier=verdict.effective_tier,
    ), client=client, alongside=ledger_and_verdict)
    return suspended_result(approval)


def suspended_result(approval) -> GateResult:
    from approvals.serializers import ApprovalSerializer

    return GateResult(202, {
        "decision": "suspended", "rule_id": approval.rule_id, "explanation": approval.explanation,
        "reason_code": approval.reason_code, "approval": ApprovalSerializer(approval).data,
        "frames": suspend_frames(approval),
    })
