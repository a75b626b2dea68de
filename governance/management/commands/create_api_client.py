from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, transaction

from agents.models import ApiClient, ApiClientKey
from audit import trail as audit


def record_created(actor: str, *objects) -> None:
    """New clients and keys, audited as the admin audits them (governance/admin.py), in the caller's transaction."""
    for obj in objects:
        id_key, object_id = ("client_id", str(obj.pk)) if isinstance(obj, ApiClient) else ("key_prefix", obj.prefix)
        audit.record(
            audit.Kind.API_CLIENT,
            actor_system=actor,
            decision="created",
            data={id_key: object_id, "before": None, "after": obj.snapshot()},
        )


class Command(BaseCommand):
    help = "Create an API client for an agent runtime and print its new key (the last line)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "--cannot-park", action="store_true", help="The client cannot wait for a human: suspends become 'blocked'."
        )

    def handle(self, *args, name, cannot_park, **options):
        client = ApiClient(name=name, can_park=not cannot_park)
        try:
            # Length, blankness, characters, then uniqueness (skipped for a name already refused,
            # so a NUL never reaches the database as a query parameter).
            client.full_clean()
        except ValidationError as error:
            reasons = " ".join(error.message_dict.get("name", error.messages))
            raise CommandError(f"Cannot create an API client named {name!r}: {reasons}") from None
        key_label = f"{name} key"
        max_label = ApiClientKey._meta.get_field("name").max_length
        if len(key_label) > max_label:  # the key's label is informational; the client keeps the full name
            key_label = f"{name[: max_label - 5]}… key"
        try:
            with transaction.atomic():
                client.save()
                key_row, key = ApiClientKey.objects.create_key(name=key_label, client=client)
                record_created(audit.command("create_api_client"), client, key_row)
        except IntegrityError:  # created by someone else since the check above
            raise CommandError(f"An API client named {name!r} already exists.") from None
        self.stderr.write(f"Created API client {name!r} (can_park={client.can_park}). The key is shown once:")
        self.stdout.write(key)
