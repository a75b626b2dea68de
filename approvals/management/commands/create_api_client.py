from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from approvals.models import ApiClient, ApiClientKey


class Command(BaseCommand):
    help = "Create an API client for an agent runtime and print its new key (the last line)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--cannot-park", action="store_true",
                            help="The client cannot wait for a human: suspends become 'blocked'.")

    def handle(self, *args, name, cannot_park, **options):
        if ApiClient.objects.filter(name=name).exists():
            raise CommandError(f"An API client named {name!r} already exists.")
        with transaction.atomic():
            client = ApiClient.objects.create(name=name, can_park=not cannot_park)
            _, key = ApiClientKey.objects.create_key(name=f"{name} key", client=client)
        self.stderr.write(f"Created API client {name!r} (can_park={client.can_park}). The key is shown once:")
        self.stdout.write(key)
