from django.core.management.base import BaseCommand, CommandError

from core.errors import CondorError
from registry import changes as registry_changes
from registry.management.commands.register_tool import governance_user
from registry.models import ToolChange


class Command(BaseCommand):
    help = (
        "Confirm (or, with --reject, reject) a pending registry change that lowers risk. The confirming "
        "governance admin must not be the one who proposed it."
    )

    def add_arguments(self, parser):
        parser.add_argument("change_id", type=int)
        parser.add_argument("--by", metavar="USER", required=True, help="The governance admin deciding.")
        parser.add_argument("--reject", action="store_true", help="Reject the change instead of confirming it.")
        parser.add_argument("--reason", default="", help="Why it is rejected (kept in the audit log).")

    def handle(self, *args, change_id, by, reject, reason, **options):
        user = governance_user(by)
        if not ToolChange.objects.filter(pk=change_id).exists():
            raise CommandError(f"No registry change {change_id}.")
        try:
            if reject:
                change = registry_changes.reject(change_id, user=user, reason=reason)
                self.stdout.write(f"Rejected change {change_id} to {change.tool}: the registry is unchanged.")
            else:
                descriptor = registry_changes.confirm(change_id, user=user)
                self.stdout.write(
                    f"Confirmed change {change_id}: {descriptor.name} is now class={descriptor.policy_class or '-'} "
                    f"tier={descriptor.hitl_tier or '-'} trust={descriptor.trust} hosts={descriptor.allowed_hosts}"
                )
        except CondorError as error:
            raise CommandError(f"{error.code}: {error.detail}") from None
