"""A reviewer's decision on a pending approval: approve, reject, edit then approve, answer or decline.

What a body means, by the approval's reason code:

* approval card: ``{approved: true, reason?, edited_args?}`` approves (the hash is of
  the edited args when there are some); ``{approved: false, reason, stop_run?}`` rejects.
* clarification: ``{values}`` answers the form and is checked against its resume
  schema; ``{approved: false, reason, stop_run?}`` declines it (the reviewer cannot or
  should not answer). Only ``values`` answers: ``{approved: true}`` here is a schema
  rejection.

A rejection and a declined clarification are the same thing and share one code path
(``_reject``): the approval becomes ``rejected`` with the reason and ``decided_by``,
the inbox gets ``card.removed``, the decision is audited, and the stream gets the
``data-approval-decision`` chunk and ``tool-output-denied``. It denies that call, not
the run (SPEC section 4): the run goes back to ``executing`` once none of its
approvals is open, so the agent can propose something else. ``stop_run: true`` ends
the run instead (``approval_denied``) and withdraws its other open approvals.

Both bodies are checked against the ``{approved, reason}`` schema first (``stop_run``
and ``edited_args`` are the decision's own fields, taken off before); a missing or
blank reason is then a 400 ``invalid_payload`` and changes nothing. Any other body
the schema refuses fails the run (422 ``resume_schema_rejected``).

Every decision, approve or deny, emits its chunk through `decision_frames`, so an
agent waiting on the stream learns the args it must run without a second request.
"""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals import bound_context, cards, claims, locked_args, quorum, seen
from approvals.decision_frames import decision_frames
from approvals.locking import lock_pending
from approvals.models import Approval, ReasonCode
from approvals.refusals import Refused, audited, refuse_if_changed
from approvals.resume_schemas import approval_resume_schema
from approvals.resume_validation import validate_resume_data
from approvals.suspend import unpark_if_nothing_open
from approvals.visibility import sees_approval
from audit import trail as audit
from core.errors import InvalidPayload, ResumeSchemaRejected
from core.hashing import canonical
from core.rows import save_write
from core.text_limits import has_control_characters
from registry import cache as registry_cache
from registry import policy_in_force
from registry.policy import effective_spec
from runs import spine
from runs.outbox import event_write
from runs.states import RunState, TerminalReason


class _SchemaRejected(Exception):
    def __init__(self, errors: list[str]):
        self.errors = errors


# A reviewer's reason is shown on the card (four eyes), in the Decided view and the audit log.
REASON_MAX_CHARS = 4000  # as a stop reason (runs/serializers.py StopSerializer)

# Fields of a decision body that are not part of the resume schema's payload.
_DECISION_FIELDS = ("edited_args", "stop_run", "payload_hash")


def _split_body(approval: Approval, body: dict) -> tuple[dict, dict, dict | None, bool]:
    """(the schema to check, what it validates, edited args, stop the run)."""
    stop_run = body.get("stop_run", False)
    if not isinstance(stop_run, bool):
        raise InvalidPayload("'stop_run' must be true or false.")
    if stop_run and body.get("approved") is not False:
        raise InvalidPayload("'stop_run' may only accompany a rejection (approved: false).")
    if approval.reason_code == ReasonCode.CLARIFICATION:
        if body.get("approved") is False:
            # Declined: checked as the rejection it is, not against the form.
            return approval_resume_schema(), _without(body, "stop_run", "payload_hash"), None, stop_run
        if set(body) != {"values"}:
            raise _SchemaRejected(["A clarification is answered with exactly one field, 'values'."])
        if not isinstance(body["values"], dict):
            raise _SchemaRejected(["'values' must be an object."])
        return approval.resume_schema, body["values"], None, False
    edited = body.get("edited_args")
    if "edited_args" in body:
        if not isinstance(edited, dict):
            raise InvalidPayload("'edited_args' must be a JSON object.")
        if body.get("approved") is not True:
            raise InvalidPayload("'edited_args' may only accompany an approval.")
    return approval.resume_schema, _without(body, *_DECISION_FIELDS), edited, stop_run


def _without(body: dict, *keys: str) -> dict:
    return {key: value for key, value in body.items() if key not in keys}


def decide(approval_id, body: dict, *, user) -> Approval:
    """Apply `user`'s decision. Raises ResumeSchemaRejected after failing the run on a bad payload.

    An approval `user` may not see (approvals/visibility.py) is 404, checked on the row
    as locked, before anything else is said of it.
    """
    visible = sees_approval(user)
    reason = body.get("reason") if isinstance(body, dict) else None
    if isinstance(reason, str) and len(reason) > REASON_MAX_CHARS:
        # Refused before anything is locked or written (a schema rejection would fail the run).
        raise InvalidPayload(f"'reason' may be at most {REASON_MAX_CHARS} characters.")
    if isinstance(reason, str) and has_control_characters(reason, multiline=True):
        raise InvalidPayload("'reason' must not contain control characters other than tab and line breaks.")
    try:
        return _decide(approval_id, body, user=user, visible=visible)
    except _SchemaRejected as rejected:
        _fail_on_schema(approval_id, rejected.errors, user=user, visible=visible)
        raise ResumeSchemaRejected(" ".join(rejected.errors)) from None
    except Refused as refused:
        raise audited(refused) from None


@transaction.atomic(durable=True)
def _decide(approval_id, body: dict, *, user, visible) -> Approval:
    # A decision is activity on the run (for the idle clock; the suspend TTL counts from the park): the lock
    # records it.
    approval, run = lock_pending(approval_id, touch=True, visible=visible)
    claims.refuse_if_claimed_by_other(approval, user, timezone.now())
    schema, payload, edited_args, stop_run = _split_body(approval, body)
    shown_hash = seen.seen_hash(body)
    errors = validate_resume_data(schema, payload)
    if errors:
        raise _SchemaRejected(errors)
    # Top-level `approved: false`, never a form value: a clarification field may be named "approved".
    if body.get("approved") is False:
        return _reject(approval, run, (payload.get("reason") or "").strip(), user=user, stop_run=stop_run)
    approved_args = edited_args if edited_args is not None else quorum.proposal(approval)
    if approval.reason_code == ReasonCode.APPROVAL:
        _check_in_force(approval, run, edited_args, approved_args, user=user)
    # Canonicalised once (RFC 8785 costs milliseconds on args too long for a card), from the args
    # themselves: whether the card was cut and the hash approved both come from what runs.
    approved = canonical(approved_args)
    if approval.reason_code == ReasonCode.APPROVAL:
        seen.require_shown(approval, user=user, seen=shown_hash, edited=edited_args is not None, approved=approved)
    now = timezone.now()
    reason = (payload.get("reason") or "") if approval.reason_code == ReasonCode.APPROVAL else ""
    if approval.reason_code == ReasonCode.APPROVAL and not quorum.count(
        approval,
        user=user,
        approved=approved,
        reason=reason,
        now=now,
    ):
        return _count_towards_quorum(approval, run, user, edited=edited_args is not None)
    approval.approve(
        by=user,
        at=now,
        approved_args=approved_args,
        payload_hash=approved.hash,
        expires_at=now + timedelta(seconds=settings.CONDOR_APPROVAL_TTL_SECONDS),
        resume_data=payload if approval.reason_code == ReasonCode.CLARIFICATION else None,
        reason=reason,
    )
    # The approval's UPDATE and its event go in the audit row's statement (the row is locked already).
    _audit_decision(
        approval,
        user,
        "approved",
        edited=edited_args is not None,
        along=(
            save_write(approval),
            event_write(
                run,
                "approval.approved",
                step_id=approval.step_id,
                data={"approval_id": str(approval.pk), "edited": edited_args is not None},
                frames=decision_frames(approval),
                inbox=cards.removed(approval),
            ),
        ),
    )
    return approval


def _check_in_force(approval: Approval, run, edited_args: dict | None, approved_args: dict, *, user) -> None:
    """What an approval of a call must still hold now: the edit keeps the patient, the session's context is
    the card's, and the policy in force would not block the args approved.

    An edit that changes an argument naming the patient is 400 locked_arg; one whose
    args the policy blocks while the args before it pass is the reviewer's to fix, 400
    invalid_payload (a reviewer may change what runs, not where data may go). A context
    or policy that changed since the card was made is 409 context_changed /
    policy_changed, audited (Refused).
    """
    spec = registry_cache.specs(approval.registry_stamp).get(approval.tool)  # lock_pending read the stamp
    if edited_args is not None:
        identity = effective_spec(approval.tool, spec)
        locked_args.refuse_retargeting(
            approval.args,
            edited_args,
            patient_ref=bound_context.bound(approval)["patient_ref"] or "",
            identity_args=identity.identity_args if identity is not None else (),
            card_locked=approval.locked_args,
        )
        context = policy_in_force.context_of(run, run.session)
        blocked = policy_in_force.blocking_verdict(approval.tool, approval.op, edited_args, context, spec)
        if (
            blocked is not None
            and policy_in_force.blocking_verdict(approval.tool, approval.op, quorum.proposal(approval), context, spec)
            is None
        ):
            raise InvalidPayload(f"The edited arguments are not allowed: {blocked.explanation}")
    refuse_if_changed(approval, run, approved_args, spec, kind=audit.Kind.DECISION, actor_user=user)


def _count_towards_quorum(approval: Approval, run, user, *, edited: bool) -> Approval:
    """One approval of several: the card stays pending (no decision chunk yet) and shows the count."""
    claims.end_claim(approval)
    counted = len(approval.approvals)
    _audit_decision(
        approval,
        user,
        "approval_counted",
        edited=edited,
        approvals=counted,
        approvals_required=approval.approvals_required,
        along=(
            save_write(approval),
            event_write(
                run,
                "approval.counted",
                step_id=approval.step_id,
                data={"approval_id": str(approval.pk), "edited": edited, "approvals": counted},
                inbox=cards.updated(approval),
            ),
        ),
    )
    return approval


def _reject(approval: Approval, run, reason: str, *, user, stop_run: bool) -> Approval:
    """Reject an approval card or decline a clarification: that call is denied; the run ends only on `stop_run`."""
    if not reason:
        raise InvalidPayload("A rejection needs a reason.")
    now = timezone.now()
    if stop_run:
        claims.refuse_if_run_claimed_by_other(run, user, now, besides=approval)
    approval.reject(by=user, at=now, reason=reason)
    _audit_decision(
        approval,
        user,
        "rejected",
        stop_run=stop_run,
        along=(
            save_write(approval),
            event_write(
                run,
                "approval.rejected",
                step_id=approval.step_id,
                data={"approval_id": str(approval.pk), "stop_run": stop_run},
                frames=decision_frames(approval),
                inbox=cards.removed(approval),
            ),
        ),
    )
    if stop_run:
        # The reviewer ends the run: its other open approvals, granted ones too, are withdrawn.
        spine.close_locked_run(
            run,
            TerminalReason.APPROVAL_DENIED,
            actor_user=user,
            step_id=approval.step_id,
            withdraw_grants=True,
            stop_reason=reason,
        )
    else:
        unpark_if_nothing_open(run, step_id=approval.step_id, touched=True)
    return approval


def _audit_decision(approval: Approval, user, decision: str, *, along: tuple = (), **data) -> None:
    """The decision's audit row; `along`: its outbox event, sent in the same statement (core.rows.run_together).
    The transaction's first: its chain head is the one the approval's lock took (approvals/locking.py)."""
    audit.record(
        audit.Kind.DECISION,
        head=approval.audit_head,
        approval=approval,
        actor_user=user,
        decision=decision,
        rule_id=approval.rule_id,
        data={
            "reason": approval.decision_reason,
            "payload_hash": approval.payload_hash,
            "reason_code": approval.reason_code,
            **data,
        },
        along=along,
    )


@transaction.atomic(durable=True)
def _fail_on_schema(approval_id, errors: list[str], *, user, visible) -> None:
    """A payload its schema refuses ends the run (suspended → failed) and closes the approval."""
    approval, run = lock_pending(approval_id, visible=visible)
    now = timezone.now()
    if run.state == RunState.SUSPENDED:
        claims.refuse_if_run_claimed_by_other(run, user, now)  # failing the run withdraws its other cards
    approval.reject(by=user, at=now, reason="resume schema rejected: " + " ".join(errors))
    approval.save()
    _audit_decision(
        approval,
        user,
        "resume_schema_rejected",
        errors=errors,
        along=(
            event_write(
                run,
                "approval.rejected",
                step_id=approval.step_id,
                data={"approval_id": str(approval.pk), "schema_errors": errors},
                frames=decision_frames(approval),
                inbox=cards.removed(approval),
            ),
        ),
    )
    if run.state == RunState.SUSPENDED:
        spine.close_locked_run(run, TerminalReason.RESUME_SCHEMA_REJECTED, actor_user=user, step_id=approval.step_id)
