"""DATABASES["default"] from DATABASE_URL, with the pool and prepared-statement options read from the environment."""

from pathlib import Path

import dj_database_url

from core.env import env_int

# psycopg prepares a statement on a connection once it has run this many times there
# (psycopg's own default). Condor's hot statements keep one text each (core/rows.py
# `kept`), so a gate call's are planned once per pooled connection instead of on every
# request (bench/README.md, "Prepared statements"). 0 turns preparing off: needed behind
# a pooler that hands a connection to another client mid-session (PgBouncer in
# transaction mode before 1.21), which Condor's own pool never does.
DEFAULT_PREPARE_THRESHOLD = 5
POOL_RECONNECT_SECONDS = 2


def database(url: str | None, *, sqlite_path: Path) -> dict:
    if url is None:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": sqlite_path,
            # IMMEDIATE takes the write lock at BEGIN, so two writers queue instead
            # of one failing with "database is locked" halfway through a transaction.
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    config = dj_database_url.parse(url)
    if config["ENGINE"] == "django.db.backends.postgresql":
        # Django's psycopg 3 pool: connections are reused across requests without
        # persistent-connection bookkeeping (CONN_MAX_AGE must stay 0 with a pool).
        config["CONN_MAX_AGE"] = 0
        # Django's backend with one change: it tests a connection from the pool before using it,
        # without a round trip when it can (condor/postgresql/base.py). After a database restart
        # the pooled connections are dead, and without the test each would fail one request.
        # Django's own test (CONN_HEALTH_CHECKS) would be a round trip every time, so it is off.
        config["ENGINE"] = "condor.postgresql"
        config["CONN_HEALTH_CHECKS"] = False
        options = config.setdefault("OPTIONS", {})
        options["pool"] = {
            "min_size": env_int("CONDOR_DB_POOL_MIN", 2),
            "max_size": env_int("CONDOR_DB_POOL_MAX", 20),
            "timeout": 10,
            # psycopg_pool retries a failed connect after one second, then two, four, eight...
            # for up to five minutes: a database back after half a minute down would wait for
            # the next retry, the requests meanwhile 503. Giving up an attempt after a moment
            # keeps the pauses short; the next request that finds the pool empty starts another.
            "reconnect_timeout": POOL_RECONNECT_SECONDS,
        }
        # Parameters travel beside the statement (psycopg's own default; Django's is to quote
        # them into its text), which is what lets a statement be prepared at all, and spares
        # quoting every value in Python.
        options["server_side_binding"] = True
        threshold = env_int("CONDOR_DB_PREPARE_THRESHOLD", DEFAULT_PREPARE_THRESHOLD, minimum=0)
        options["prepare_threshold"] = threshold or None
    return config
