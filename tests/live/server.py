"""A real daphne serving condor.asgi:application, for tests (and benches) that need the wire.

Started as a separate process with `daphne`, exactly as production runs it, on
the database and Redis the caller names. A subprocess rather than a fork: the
parent's psycopg pool and Redis connections must not be shared with the child.
Stdlib only at import time, so this module loads without Django settings.
"""

from __future__ import annotations

from urllib.parse import quote

from tests.helpers.processes import BIN, Service


class DaphneServer(Service):
    """`with DaphneServer(env) as server:` → daphne on 127.0.0.1:<free port>, its log in `server.log()`."""

    def __init__(self, env: dict[str, str], *, startup_timeout: float = 90.0):
        # Port 0 and the "Listening on" line: no race for a port picked in advance.
        argv = [str(BIN / "daphne"), "-e", "tcp:port=0:interface=127.0.0.1", "condor.asgi:application"]
        super().__init__(
            "daphne", argv, env, ready=r"Listening on TCP address 127\.0\.0\.1:(\d+)", startup_timeout=startup_timeout
        )

    @property
    def port(self) -> int:
        return int(self.ready.group(1))

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str = "") -> str:
        return f"http://{self.host}{path}"


def database_url(settings_database: dict) -> str:
    """A DATABASE_URL for the database Django is using now (the test database, under pytest)."""
    db = settings_database
    auth = quote(db["USER"], safe="") + (f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
