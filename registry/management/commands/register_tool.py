from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from audit import trail as audit
from core.errors import CondorError
from registry import changes as registry_changes
from registry import simulator
from registry.four_eyes import is_governance_admin
from registry.models import ToolDescriptor
from registry.models.tools import PolicyClassChoice, TierChoice, TrustChoice


def governance_user(username: str):
    """The named governance admin, or a CommandError saying why not."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"No user named {username!r}.")
    if not is_governance_admin(user):
        raise CommandError(f"{username!r} is not a governance admin (may not change the tool registry).")
    return user


class Command(BaseCommand):
    help = (
        "Create or update a tool descriptor in the registry (an audited registry change). A change that "
        "lowers risk is only proposed: it needs --by USER (a governance admin) and takes effect when a "
        "second governance admin confirms it (confirm_tool_change ID --by OTHER_USER, or in the admin)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--class", dest="policy_class", choices=PolicyClassChoice.values)
        parser.add_argument("--tier", choices=TierChoice.values)
        parser.add_argument("--trust", choices=TrustChoice.values)
        parser.add_argument("--allowed-host", dest="allowed_hosts", action="append", metavar="HOST")
        parser.add_argument("--mutating", action="store_true", help="Set metadata.mutating = true.")
        parser.add_argument("--description")
        parser.add_argument(
            "--approvals-required",
            dest="approvals_required",
            type=int,
            choices=(1, 2, 3),
            help="Distinct reviewers who must approve a call (four eyes: 2).",
        )
        parser.add_argument(
            "--identity-arg",
            dest="identity_args",
            action="append",
            metavar="NAME",
            help="An argument that names the patient: a reviewer's edit may not change it "
            "(repeat for several; replaces the tool's list).",
        )
        parser.add_argument(
            "--by", metavar="USER", help="The governance admin making the change (required when it lowers risk)."
        )

    def handle(
        self,
        *args,
        name,
        policy_class,
        tier,
        trust,
        allowed_hosts,
        mutating,
        description,
        by,
        approvals_required=None,
        identity_args=None,
        **options,
    ):
        fields = {}
        if policy_class:
            fields["policy_class"] = policy_class
        if tier:
            fields["hitl_tier"] = tier
        if trust:
            fields["trust"] = trust
        if allowed_hosts:
            fields["allowed_hosts"] = allowed_hosts
        if description is not None:
            fields["description"] = description
        if approvals_required is not None:
            fields["approvals_required"] = approvals_required
        if identity_args:
            fields["identity_args"] = identity_args
        if mutating:
            existing = ToolDescriptor.objects.filter(name=name).values_list("metadata", flat=True).first()
            fields["metadata"] = {**(existing or {}), "mutating": True}
        user = governance_user(by) if by else None
        try:
            submitted = registry_changes.submit(name, fields, user=user, actor_system=audit.command("register_tool"))
        except ValidationError as error:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())) from None
        except CondorError as error:
            raise CommandError(f"{error.code}: {error.detail}") from None
        if submitted.change is not None:
            change = submitted.change
            self.stdout.write(
                f"Proposed change {change.pk} to {name}: it lowers risk ({'; '.join(change.reasons)}).\n"
                f"It takes effect when another governance admin confirms it: "
                f"manage.py confirm_tool_change {change.pk} --by USER (or in the admin)."
            )
            self._impact(change)
            return
        descriptor = submitted.descriptor
        self.stdout.write(
            f"{'Registered' if submitted.created else 'Updated'} {descriptor.name}: "
            f"class={descriptor.policy_class or '-'} "
            f"tier={descriptor.hitl_tier or '-'} trust={descriptor.trust} hosts={descriptor.allowed_hosts} "
            f"approvals_required={descriptor.approvals_required} identity_args={descriptor.identity_args}"
        )

    def _impact(self, change):
        """The truth-table cells the change would alter: the impact the confirming admin weighs."""
        impact = simulator.impact(
            change.tool,
            registry_changes.spec_of(change.tool, change.before),
            registry_changes.spec_of(change.tool, change.after),
        )
        self.stdout.write(f"Impact: {impact.changed_cells} cell(s) change, {impact.loosened_cells} let more through:")
        for ctx, cells in impact.rows:
            for (op, _), cell in zip(impact.ops, cells, strict=True):
                if cell.changed:
                    self.stdout.write(
                        f"  {ctx.autonomy:<10} tainted={ctx.tainted!s:<5} consent={ctx.consent!s:<5} "
                        f"{ctx.age_band:<7} op={op:<8} {cell.before.rule_id} -> {cell.after.rule_id}"
                    )
