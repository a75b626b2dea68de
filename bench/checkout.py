"""One checkout of Condor made ready to serve a benchmark: its own scratch database, migrated by its own
manage.py, an API client and a reviewer made by its own management commands, its own Redis prefix."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from bench.scratch_db import drop_database, recreate_database, vacuum
from bench.served import Gunicorn

# bench_settings and bench_statements, imported by name by the served checkout (it may have no such bench/).
SERVER_MODULES = Path(__file__).resolve().parent / "server"

# Run by the checkout's `manage.py shell`: its own commands make the actors, whatever its modules are.
ACTORS = """
import io
from django.core.management import call_command
call_command("seed_tools", stdout=io.StringIO())
key = io.StringIO()
call_command("create_api_client", {client!r}, stdout=key, stderr=io.StringIO())
call_command("create_reviewer", {reviewer!r}, password={password!r}, stdout=io.StringIO())
print("API key:", key.getvalue().split()[-1])
"""


class Checkout:
    """The tree at `tree`, labelled `label`, on the database at `database_url` and Redis under `prefix`."""

    def __init__(self, label: str, tree: Path, database_url: str, redis_url: str, prefix: str):
        self.label, self.tree = label, tree.resolve()
        self.database_url, self.redis_url, self.prefix = database_url, redis_url, prefix
        # Never starting with "-": create_reviewer would take it for an option.
        self.reviewer, self.password = "bench-rita", "pw-" + secrets.token_urlsafe(24)
        self.key = ""
        if not (self.tree / "manage.py").is_file():
            raise SystemExit(f"{label}: no manage.py in {self.tree}")

    @property
    def env(self) -> dict:
        return {
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "CONDOR_CHANNEL_PREFIX": self.prefix,
            "LOG_LEVEL": "WARNING",
            # whitenoise's, in a tree that has never run collectstatic: nothing here serves a static file
            "PYTHONWARNINGS": "ignore:No directory at",
        }

    def describe(self) -> str:
        """The tree and the commit it has checked out (with `+` when it has changes)."""

        def git(*args):
            return subprocess.run(["git", "-C", str(self.tree), *args], capture_output=True, text=True).stdout.strip()

        dirty = "+" if git("status", "--porcelain", "--untracked-files=no") else ""
        return f"{self.label} {self.tree} at {git('rev-parse', '--short', 'HEAD')}{dirty}"

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.tree,
            capture_output=True,
            text=True,
            env={**os.environ, **self.env, "DJANGO_SETTINGS_MODULE": "condor.settings"},
        )
        if done.returncode:
            raise SystemExit(f"{self.label}: manage.py {args[0]} failed in {self.tree}:\n{done.stderr[-3000:]}")
        return done.stdout

    def create_database(self, template: str | None = None) -> None:
        """A new database: empty, or a copy of the database `template`."""
        recreate_database(self.database_url, template=template)

    def prepare(self) -> None:
        """The database migrated by the checkout, with the tool catalog, an API client and a reviewer."""
        self.manage("migrate", "--noinput", "-v", "0")
        out = self.manage(
            "shell", "-c", ACTORS.format(client="bench-agent", reviewer=self.reviewer, password=self.password)
        )
        self.key = next(line.split()[-1] for line in out.splitlines() if line.startswith("API key:"))

    def serve(self, *, workers: int, threads: int) -> Gunicorn:
        """gunicorn from the tree, with bench_settings (Condor's, and the statement counter)."""
        python_path = os.pathsep.join(filter(None, [str(SERVER_MODULES), os.environ.get("PYTHONPATH")]))
        return Gunicorn(
            self.tree,
            {**self.env, "DJANGO_SETTINGS_MODULE": "bench_settings", "PYTHONPATH": python_path},
            workers=workers,
            threads=threads,
        )

    def vacuum(self) -> None:
        vacuum(self.database_url)

    def forget(self) -> None:
        """Its database dropped and its Redis keys deleted."""
        drop_database(self.database_url)
        import redis

        client = redis.Redis.from_url(self.redis_url)
        for key in client.scan_iter(match=f"{self.prefix}*", count=1000):
            client.delete(key)
