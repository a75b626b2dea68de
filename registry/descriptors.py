"""Changing the tool registry: one write path, audited."""

from django.db import transaction

from audit import trail as audit
from registry import cache as registry_cache
from registry.models import ToolDescriptor
from registry.policy import STATIC_REGISTRY

_FIELDS = (
    "description",
    "policy_class",
    "hitl_tier",
    "trust",
    "allowed_hosts",
    "metadata",
    "approvals_required",
    "identity_args",
)


def snapshot(descriptor: ToolDescriptor) -> dict:
    return {field: getattr(descriptor, field) for field in _FIELDS}


@transaction.atomic
def register(name: str, *, actor_user=None, actor_system: str = "", **fields) -> tuple[ToolDescriptor, bool]:
    """Create or update the descriptor `name` with `fields`; validated, then audited.

    Applies at once. An edit a person asks for goes through
    registry.changes.submit, which holds a risk-lowering one for a second admin.
    """
    descriptor = ToolDescriptor.objects.select_for_update().filter(name=name).first()
    created = descriptor is None
    before = None if created else snapshot(descriptor)
    if created:
        descriptor = ToolDescriptor(name=name)
    for field, value in fields.items():
        setattr(descriptor, field, value)
    descriptor.full_clean()
    descriptor.save()
    # The gate's in-memory copy; other processes see the new updated_at stamp.
    transaction.on_commit(registry_cache.invalidate)
    after = snapshot(descriptor)
    if before != after:
        audit.record(
            audit.Kind.REGISTRY_CHANGE,
            actor_user=actor_user,
            actor_system=actor_system,
            tool=name,
            decision="created" if created else "updated",
            data={"before": before, "after": after},
        )
    return descriptor, created


def seed_static_catalog(actor_system: str = audit.command("seed_tools")) -> int:
    """Mirror the built-in static registry into the database (missing rows only). Returns rows added."""
    added = 0
    for name, spec in STATIC_REGISTRY.items():
        if ToolDescriptor.objects.filter(name=name).exists():
            continue
        register(
            name,
            description=spec.description,
            policy_class=spec.policy_class,
            hitl_tier=spec.hitl_tier,
            trust=spec.trust,
            allowed_hosts=list(spec.allowed_hosts),
            metadata=dict(spec.metadata),
            approvals_required=spec.approvals_required,
            identity_args=list(spec.identity_args),
            actor_system=actor_system,
        )
        added += 1
    return added
