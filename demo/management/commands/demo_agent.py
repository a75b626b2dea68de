"""`manage.py demo_agent`: the scripted clinical agent of `make run`, driving sessions through the API."""

import asyncio
import logging
import os

from django.core.management.base import BaseCommand, CommandError

from demo.agent import CondorError, drive
from demo.management.commands.seed_demo import KEY_FILE


class Command(BaseCommand):
    help = (
        "Drive realistic agent sessions (prescriptions, vitals, email, an untrusted upload, a clarification) "
        "against a running Condor in a loop, so the inbox fills and decisions flow back into the runs."
    )

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default=f"http://127.0.0.1:{os.environ.get('PORT', '8000')}")
        parser.add_argument(
            "--key", help=f"the agent's API key (default: read from {KEY_FILE}, which seed_demo writes)"
        )
        parser.add_argument("--loops", type=int, default=0, help="rounds to play; 0 (default) plays until stopped")
        parser.add_argument("--pause", type=float, default=30.0, help="seconds between rounds")
        parser.add_argument("--stagger", type=float, default=4.0, help="seconds between the sessions of a round")
        parser.add_argument("--wait", type=float, default=900.0, help="seconds a call waits for its reviewer")

    def handle(self, *args, base_url, key, loops, pause, stagger, wait, **options):
        if key is None:
            if not KEY_FILE.exists():
                raise CommandError(f"No agent key: pass --key, or run `manage.py seed_demo` to write {KEY_FILE}.")
            key = KEY_FILE.read_text().strip()

        # One line per request would bury the story the agent tells.
        logging.getLogger("httpx").setLevel(logging.WARNING)

        def say(line: str) -> None:
            self.stdout.write(f"demo-agent: {line}")
            self.stdout.flush()

        try:
            asyncio.run(drive(base_url, key, loops=loops, pause=pause, stagger=stagger, wait=wait, say=say))
        except KeyboardInterrupt:
            say("stopped")
        except CondorError as error:
            raise CommandError(str(error)) from None
