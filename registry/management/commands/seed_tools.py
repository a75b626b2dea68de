from django.core.management.base import BaseCommand

from registry.descriptors import seed_static_catalog


class Command(BaseCommand):
    help = "Copy the built-in clinical tool catalog into the registry (existing rows are left alone)."

    def handle(self, *args, **options):
        added = seed_static_catalog()
        self.stdout.write(f"Tool catalog seeded: {added} descriptor(s) added.")
