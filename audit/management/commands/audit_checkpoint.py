from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from audit import checkpoints as audit_checkpoints


class Command(BaseCommand):
    help = (
        "Append one checkpoint of the audit chains' heads, HMAC-signed with CONDOR_AUDIT_KEY, to an "
        "append-only file (--file, or CONDOR_AUDIT_CHECKPOINT_FILE). verify_audit --checkpoints FILE "
        "checks the log against it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--file", help="The checkpoint file (default: CONDOR_AUDIT_CHECKPOINT_FILE).")

    def handle(self, *args, file=None, **options):
        path = file or settings.CONDOR_AUDIT_CHECKPOINT_FILE
        if not path:
            raise CommandError("Name the checkpoint file: --file PATH, or CONDOR_AUDIT_CHECKPOINT_FILE.")
        try:
            line = audit_checkpoints.write(path)
        except audit_checkpoints.CheckpointRefused as refused:
            raise CommandError(str(refused)) from None
        scope = f"that gained rows since {line['since']}" if line["since"] else "(all of them)"
        self.stdout.write(f"checkpoint appended to {path}: {len(line['heads'])} chain heads {scope}")
