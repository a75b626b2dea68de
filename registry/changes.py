"""Registry four eyes: a change that lowers risk waits for a second governance admin.

People change the registry through ``submit`` (the admin and ``register_tool``); an
edit that lowers risk becomes a pending ``ToolChange`` and takes effect only when a
different governance admin ``confirm``s it; any other edit applies at once through
``registry.descriptors.register`` (audited with before and after). Proposal,
confirmation and rejection are each audited as ``registry_change`` rows whose
``decision`` is ``proposed`` / ``confirmed`` / ``rejected``.

What lowers risk is judged on the descriptor the gate applies (the row laid over the
static catalog, ``effective_spec``), so clearing a row's field to fall back to a looser
static value counts too. An edit lowers risk when any of these holds:

* the resolved policy class moves down this order (most restrictive first):
  unrecognised (fails closed) > exec (always asks) > comms (asks unless autonomous,
  consented, adult and untainted; blocked for children) > mutate (a low tier lets
  autonomous calls through) > read (always allowed);
* the HITL tier of a mutate tool goes from high or missing (decided as high) to low;
* trust goes from untrusted to trusted (the tool's results stop tainting sessions);
* a host is added to the allow-list the gate applies;
* ``approvals_required`` (review quorum, when the registry has it) goes down;
* an identity arg is dropped (a reviewer's edit could then change it);
* any cell of the tool's truth table (simulator) lets more through than before.

A tool new to both registries is judged by its hosts and its truth table only:
registering one that declares hosts, or that the gate would then allow somewhere (a
read, a low-tier mutate), is a lowering, since before its row every call to it failed
closed as unregistered; a new high-tier mutate or exec tool without hosts applies at once.
"""

import copy
from dataclasses import dataclass

from django.db import transaction

from audit import trail as audit
from core.errors import (
    NotGovernanceAdmin,
    ToolChangeAlreadyPending,
    ToolChangeNeedsSecondAdmin,
    ToolChangeNotPending,
    ToolChangeStale,
)
from registry import descriptors as registry
from registry import simulator
from registry.four_eyes import dependence, is_governance_admin
from registry.models import ToolChange, ToolChangeStatus, ToolDescriptor
from registry.policy import ToolCall, ToolSpec, Trust, effective_spec, resolve_policy_class

# Higher = more restrictive. None and unrecognised strings fail closed: the top.
CLASS_RESTRICTIVENESS = {"read": 1, "mutate": 2, "comms": 3, "exec": 4}
FAIL_CLOSED = 5


def spec_of(name: str, fields: dict | None) -> ToolSpec | None:
    """The registry row `fields` (a snapshot) as the engine reads it; None = no row."""
    if fields is None:
        return None
    return ToolDescriptor(name=name, **fields).to_spec()


def _restrictiveness(policy_class: str | None) -> int:
    return CLASS_RESTRICTIVENESS.get(policy_class, FAIL_CLOSED)


def lowering_reasons(name: str, before: dict | None, after: dict) -> list[str]:
    """Why replacing the row `before` (None = no row) by `after` lowers risk; empty if it does not."""
    old_row, new_row = spec_of(name, before), spec_of(name, after)
    old, new = effective_spec(name, old_row), effective_spec(name, new_row)
    reasons = []
    # A tool new to both registries has no class or tier of its own to lower: before its
    # row it failed closed as unregistered, and the truth table below says what it now allows.
    old_class, new_class = (resolve_policy_class(ToolCall(tool=name), spec) for spec in (old_row, new_row))
    if old is not None and _restrictiveness(new_class) < _restrictiveness(old_class):
        reasons.append(f"policy class {old_class} → {new_class}")
    # The tier only means something to a mutate tool; a class change is judged above.
    if old_class == new_class == "mutate" and new.hitl_tier == "low" and old.hitl_tier != "low":
        reasons.append(f"tier {old.hitl_tier or 'missing (decided as high)'} → low")
    if old is not None and old.trust == Trust.UNTRUSTED and new is not None and new.trust != Trust.UNTRUSTED:
        reasons.append("trust untrusted → trusted")
    added = sorted(set(new.allowed_hosts if new else ()) - set(old.allowed_hosts if old else ()))
    if added:
        reasons.append(f"allowed hosts added: {', '.join(added)}")
    unlocked = sorted(set(old.identity_args if old else ()) - set(new.identity_args if new else ()))
    if unlocked:
        reasons.append(f"identity args no longer locked: {', '.join(unlocked)}")
    if "approvals_required" in after and int(after["approvals_required"] or 1) < int(
        (before or {}).get("approvals_required") or 1
    ):
        reasons.append(f"approvals required {(before or {}).get('approvals_required')} → {after['approvals_required']}")
    loosened = simulator.impact(name, old_row, new_row).loosened_cells
    if loosened:
        reasons.append(f"{loosened} truth-table cell(s) would let more through")
    return reasons


@dataclass(frozen=True)
class Submitted:
    """What `submit` did: applied at once (`descriptor`) or proposed (`change`)."""

    descriptor: ToolDescriptor | None = None
    created: bool = False
    change: ToolChange | None = None


def _validated(name: str, current: ToolDescriptor | None, fields: dict) -> ToolDescriptor:
    """An unsaved copy of the row with `fields` applied, checked like a save would be."""
    candidate = ToolDescriptor(name=name) if current is None else copy.copy(current)
    for field, value in fields.items():
        setattr(candidate, field, value)
    candidate.full_clean()
    return candidate


@transaction.atomic
def submit(name: str, fields: dict, *, user=None, actor_system: str = "") -> Submitted:
    """Change the tool `name` as a person asked: at once, or as a pending four-eyes proposal.

    Invalid fields raise ValidationError and change nothing. A lowering change needs a
    governance admin as `user` (NotGovernanceAdmin otherwise), and no other pending
    change for the tool (ToolChangeAlreadyPending). `actor_system` names the command
    that made a change applied at once without a person (e.g. `command:register_tool`).
    """
    current = ToolDescriptor.objects.select_for_update().filter(name=name).first()
    before = registry.snapshot(current) if current is not None else None
    after = registry.snapshot(_validated(name, current, fields))
    reasons = lowering_reasons(name, before, after)
    if not reasons:
        descriptor, created = registry.register(
            name, actor_user=user, actor_system="" if user else actor_system, **fields
        )
        return Submitted(descriptor=descriptor, created=created)
    if not is_governance_admin(user):
        raise NotGovernanceAdmin(
            f"This change lowers risk ({'; '.join(reasons)}): a governance admin must propose it "
            "and a second one confirm it."
        )
    if ToolChange.objects.filter(tool=name, status=ToolChangeStatus.PENDING).exists():
        raise ToolChangeAlreadyPending()
    change = ToolChange.objects.create(tool=name, before=before, after=after, reasons=reasons, proposed_by=user)
    audit.record(
        audit.Kind.REGISTRY_CHANGE,
        actor_user=user,
        tool=name,
        decision="proposed",
        data={"change": change.pk, "before": before, "after": after, "reasons": reasons},
    )
    return Submitted(change=change)


def _locked_pending(change_id: int) -> ToolChange:
    change = ToolChange.objects.select_for_update().get(pk=change_id)
    if change.status != ToolChangeStatus.PENDING:
        raise ToolChangeNotPending()
    return change


@transaction.atomic
def confirm(change_id: int, *, user) -> ToolDescriptor:
    """A second governance admin confirms: the change applies exactly as proposed."""
    change = _locked_pending(change_id)
    if not is_governance_admin(user):
        raise NotGovernanceAdmin()
    if (why := dependence(user, change.proposed_by)) is not None:
        raise ToolChangeNeedsSecondAdmin(f"{ToolChangeNeedsSecondAdmin.default_detail} Not you: {why}.")
    current = ToolDescriptor.objects.select_for_update().filter(name=change.tool).first()
    # The impact both admins saw was computed against `before`: anything else is another change.
    if (registry.snapshot(current) if current is not None else None) != change.before:
        raise ToolChangeStale()
    descriptor, _ = registry.register(change.tool, actor_user=user, **change.after)
    change.decide(ToolChangeStatus.CONFIRMED, user)
    audit.record(
        audit.Kind.REGISTRY_CHANGE,
        actor_user=user,
        tool=change.tool,
        decision="confirmed",
        data={
            "change": change.pk,
            "proposed_by": change.proposed_by.get_username(),
            "before": change.before,
            "after": change.after,
            "reasons": change.reasons,
        },
    )
    return descriptor


@transaction.atomic
def reject(change_id: int, *, user, reason: str = "") -> ToolChange:
    """A governance admin rejects the proposal (its proposer may: that withdraws it). Nothing applies."""
    change = _locked_pending(change_id)
    if not is_governance_admin(user):
        raise NotGovernanceAdmin()
    change.decide(ToolChangeStatus.REJECTED, user, reason)
    audit.record(
        audit.Kind.REGISTRY_CHANGE,
        actor_user=user,
        tool=change.tool,
        decision="rejected",
        data={
            "change": change.pk,
            "proposed_by": change.proposed_by.get_username(),
            "reason": reason,
            "before": change.before,
            "after": change.after,
        },
    )
    return change
