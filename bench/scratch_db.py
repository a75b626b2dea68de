"""Shared set-up for the benchmarks that run against a scratch PostgreSQL database."""

import os
import sys

# A benchmark drives one client far past the abuse limits set for agents in production
# (per-client request rates, open approvals per client). Set before settings load, and
# inherited by the servers the benchmarks start; a run may still set its own.
os.environ.setdefault("CONDOR_THROTTLE_RATE", "off")
os.environ.setdefault("CONDOR_THROTTLE_RATE_GATE", "off")
os.environ.setdefault("CONDOR_MAX_PENDING_PER_CLIENT", "1000000")


def _maintenance(url: str):
    """(a psycopg connection to the server's `postgres` database in autocommit, the database named in `url`)."""
    import dj_database_url
    import psycopg

    config = dj_database_url.parse(url)
    if config["ENGINE"] != "django.db.backends.postgresql":
        sys.exit("this benchmark measures the PostgreSQL deployment: set DATABASE_URL=postgres://…")
    params = {
        "dbname": "postgres",
        "user": config["USER"] or None,
        "password": config["PASSWORD"] or None,
        "host": config["HOST"] or None,
        "port": config["PORT"] or None,
    }
    return psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True), config["NAME"]


def ensure_database(url: str) -> None:
    """CREATE DATABASE if it is missing."""
    conn, name = _maintenance(url)
    with conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def recreate_database(url: str, *, template: str | None = None) -> None:
    """The database named in `url`, empty (or a copy of `template`): dropped first if it exists."""
    conn, name = _maintenance(url)
    with conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))


def drop_database(url: str) -> None:
    conn, name = _maintenance(url)
    with conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def named(url: str, name: str) -> str:
    """`url` with its database name replaced by `name`."""
    return url.rsplit("/", 1)[0] + "/" + name


def vacuum(url: str) -> None:
    """VACUUM ANALYZE the scratch database, as autovacuum would keep it in production.

    A PostgreSQL without autovacuum (this machine's runs with it off) keeps every dead
    row's index entries and plans with no statistics: a bench database then slows run
    after run for reasons no deployment has.
    """
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def setup_django() -> None:
    """django.setup() and migrate the scratch database."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
