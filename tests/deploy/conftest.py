"""The deployment tests: real gunicorn, daphne, celery worker and beat, and `make prod`, as subprocesses.

They share this run's test database and Redis (the run's Redis key prefix keeps
test runs apart), so they need `transactional_db`: another process only sees
committed rows. Every process is stopped in a `finally` (the fixtures' context
managers), whatever the test did.
"""

import pytest


@pytest.fixture
def shared_env(transactional_db, django_db_serialized_rollback):
    """The environment that puts a subprocess on this test's database, Redis and secret key."""
    from django.conf import settings
    from django.db import connection

    from tests.live.server import database_url

    database = settings.DATABASES["default"]
    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        pytest.skip("several processes share one database and one Redis: PostgreSQL and REDIS_URL only")
    return {
        "DATABASE_URL": database_url(database),
        "REDIS_URL": settings.REDIS_URL,
        "CONDOR_CHANNEL_PREFIX": settings.REDIS_PREFIX,
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
