from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from approvals import audit, registry
from approvals.models.tools import PolicyClassChoice, TierChoice, TrustChoice


class Command(BaseCommand):
    help = "Create or update a tool descriptor in the registry (an audited registry change)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--class", dest="policy_class", choices=PolicyClassChoice.values)
        parser.add_argument("--tier", choices=TierChoice.values)
        parser.add_argument("--trust", choices=TrustChoice.values)
        parser.add_argument("--allowed-host", dest="allowed_hosts", action="append", metavar="HOST")
        parser.add_argument("--mutating", action="store_true", help="Set metadata.mutating = true.")
        parser.add_argument("--description")

    def handle(self, *args, name, policy_class, tier, trust, allowed_hosts, mutating, description, **options):
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
        if mutating:
            from approvals.models import ToolDescriptor

            existing = ToolDescriptor.objects.filter(name=name).values_list("metadata", flat=True).first()
            fields["metadata"] = {**(existing or {}), "mutating": True}
        try:
            descriptor, created = registry.register(name, actor_system=audit.command("register_tool"), **fields)
        except ValidationError as error:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())) from None
        self.stdout.write(
            f"{'Registered' if created else 'Updated'} {descriptor.name}: class={descriptor.policy_class or '-'} "
            f"tier={descriptor.hitl_tier or '-'} trust={descriptor.trust} hosts={descriptor.allowed_hosts}"
        )
