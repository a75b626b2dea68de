from django.core.management.base import BaseCommand

from condor.sweeps import sweep


class Command(BaseCommand):
    help = "Run one sweep pass (the same code as the Celery beat task)."

    def handle(self, *args, **options):
        for step, count in sweep().items():
            self.stdout.write(f"{step}: {count}")
