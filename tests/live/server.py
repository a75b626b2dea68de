"""A real daphne serving condor.asgi:application, for tests (and benches) that need the wire.

Started as a separate process with `daphne`, exactly as production runs it, on
the database and Redis the caller names. A subprocess rather than a fork: the
parent's psycopg pool and Redis connections must not be shared with the child.
Stdlib only at import time, so this module loads without Django settings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[2]
DAPHNE = Path(sys.executable).with_name("daphne")
_LISTENING = re.compile(r"Listening on TCP address 127\.0\.0\.1:(\d+)")


class DaphneServer:
    """`with DaphneServer(env) as server:` → daphne on 127.0.0.1:<free port>, its log in `server.log()`."""

    def __init__(self, env: dict[str, str], *, startup_timeout: float = 90.0):
        self.env = {**os.environ, "DJANGO_SETTINGS_MODULE": "condor.settings", **env}
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self._log = tempfile.NamedTemporaryFile("w+b", prefix="daphne-", suffix=".log", delete=False)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str = "") -> str:
        return f"http://{self.host}{path}"

    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")

    def start(self) -> "DaphneServer":
        # Port 0 and the "Listening on" line: no race for a port picked in advance.
        self.process = subprocess.Popen(
            [str(DAPHNE), "-e", "tcp:port=0:interface=127.0.0.1", "condor.asgi:application"],
            cwd=REPO, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            match = _LISTENING.search(self.log())
            if match:
                self.port = int(match.group(1))
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited with {self.process.returncode}:\n{self.log()}")
            time.sleep(0.05)
        log = self.log()  # read before stop() removes the file
        self.stop()
        raise RuntimeError(f"daphne did not listen within {self.startup_timeout} s:\n{log}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        os.unlink(self._log.name)

    def __enter__(self) -> "DaphneServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def database_url(settings_database: dict) -> str:
    """A DATABASE_URL for the database Django is using now (the test database, under pytest)."""
    db = settings_database
    auth = quote(db["USER"], safe="") + (f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
