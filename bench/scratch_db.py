"""Shared set-up for the benchmarks that run against a scratch PostgreSQL database."""

import os
import sys
from pathlib import Path

# A benchmark drives one client far past the abuse limits set for agents in production
# (per-client request rates, open approvals per client). Set before settings load, and
# inherited by the servers the benchmarks start; a run may still set its own.
os.environ.setdefault("CONDOR_THROTTLE_RATE", "off")
os.environ.setdefault("CONDOR_THROTTLE_RATE_GATE", "off")
os.environ.setdefault("CONDOR_MAX_PENDING_PER_CLIENT", "1000000")


def ensure_database(url: str) -> None:
    """CREATE DATABASE if it is missing (connecting to the `postgres` maintenance database)."""
    import dj_database_url
    import psycopg

    config = dj_database_url.parse(url)
    if config["ENGINE"] != "django.db.backends.postgresql":
        sys.exit("this benchmark measures the PostgreSQL deployment: set DATABASE_URL=postgres://…")
    params = {"dbname": "postgres", "user": config["USER"] or None, "password": config["PASSWORD"] or None,
              "host": config["HOST"] or None, "port": config["PORT"] or None}
    with psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{config["NAME"]}"')
            print(f"created database {config['NAME']}")


def vacuum(url: str) -> None:
    """VACUUM ANALYZE the scratch database, as autovacuum would keep it in production.

    A PostgreSQL without autovacuum (this machine's runs with it off) keeps every dead
    row's index entries and plans with no statistics: a bench database then slows run
    after run for reasons no deployment has (bench/README.md, "Session 8").
    """
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SHOW autovacuum").fetchone()[0] != "on":
            print("autovacuum is off on this server: the bench vacuums its database before each round")
        conn.execute("VACUUM ANALYZE")


def setup_django() -> None:
    """django.setup() and migrate the scratch database."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def backend_cpu_seconds(pid: int) -> float | None:
    """CPU seconds a local PostgreSQL backend has used (from /proc); None when the server is elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
