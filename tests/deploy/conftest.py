"""The deployment tests: real gunicorn, daphne, celery worker and beat, and `make prod`, as subprocesses.

They share this run's test database and Redis (the channel-layer prefix keeps
test runs apart), so they need `transactional_db`: another process only sees
committed rows. Every process is stopped in a `finally` (the fixtures' context
managers), whatever the test did.
"""

import pytest

# The audit log refuses TRUNCATE (approvals migration 0006), and the flush that ends a
# transactional test is a TRUNCATE: the table owner lifts the refusal for that flush only.
AUDIT_GUARDS = (("approvals_auditevent", "condor_audit_append_only"),
                ("approvals_auditchainhead", "condor_audit_head_keep"))


def _audit_guards(action: str) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return  # the triggers are PostgreSQL's; these tests skip elsewhere anyway
    with connection.cursor() as cursor:
        for table, trigger in AUDIT_GUARDS:
            cursor.execute(f"ALTER TABLE {table} {action} TRIGGER {trigger}")


@pytest.fixture(scope="module", autouse=True)
def _flushable_audit_log(django_db_setup, django_db_blocker):
    """For this module's tests only (module scope: around every flush they end with)."""
    with django_db_blocker.unblock():
        _audit_guards("DISABLE")
    yield
    with django_db_blocker.unblock():
        _audit_guards("ENABLE")


@pytest.fixture
def shared_env(transactional_db, django_db_serialized_rollback):
    """The environment that puts a subprocess on this test's database, Redis and secret key."""
    from django.conf import settings

    from tests.live.server import database_url

    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.postgresql" or not settings.REDIS_URL:
        pytest.skip("several processes share one database and one Redis: PostgreSQL and REDIS_URL only")
    return {
        "DATABASE_URL": database_url(database),
        "REDIS_URL": settings.REDIS_URL,
        "CONDOR_CHANNEL_PREFIX": settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"],
        "SECRET_KEY": settings.SECRET_KEY,  # session cookies made here must verify there
        "CONDOR_DB_POOL_MIN": "1",
        "CONDOR_DB_POOL_MAX": "4",
    }


@pytest.fixture
def empty_task_queue(shared_env):
    """No sweep pass left queued in Redis by an earlier test (or an earlier run) reaches this one's workers."""
    from condor.celery import app

    app.control.purge()
    yield
    app.control.purge()
