"""Shared set-up for the benchmarks that run against a scratch PostgreSQL database."""

import sys


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


def setup_django() -> None:
    """django.setup() and migrate the scratch database."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
