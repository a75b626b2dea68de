"""Personas shared by the whole suite.

- `ward_agent`: the owner client, an agent runtime on a hospital ward (its key in `api`).
- `other_agent`: another client; its key (`other_api`) must see none of the owner's objects.
- `rita`: a clinical reviewer (logged in through `reviewer_http`, CSRF enforced).
- `carl`: a compliance officer; `gina`: a governance admin.
"""

import os
import sys

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from registry.descriptors import seed_static_catalog
from tests.helpers.approval_loop import parked_run
from tests.helpers.personas import agent, api_for, logged_in, person
from tests.helpers.runs import open_executing_run

pytest_plugins = ["tests.ci_skips"]

# This run's own names on the shared machine: two runs at once must not meet in PostgreSQL or Redis.
RUN = f"{os.getpid()}"


def _isolate_redis():
    """This run's keys in Redis (channel groups, throttle counters, API keys, the Celery queue) carry its own
    prefix, as settings.py derives them from CONDOR_CHANNEL_PREFIX; the servers and workers
    the tests start get the same prefix through that variable. Done at import, before
    anything has connected (pytest-django has loaded the settings by now)."""
    from django.conf import settings

    if not settings.REDIS_URL:
        return
    settings.REDIS_PREFIX = f"condor-test-{RUN}"
    settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = settings.REDIS_PREFIX
    for name in ("throttle", "api_keys"):
        settings.CACHES[name]["KEY_PREFIX"] = f"{settings.REDIS_PREFIX}-{name}"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": f"{settings.REDIS_PREFIX}:"}


_isolate_redis()


def pytest_sessionfinish(session, exitstatus):
    """The run's own keys leave Redis with it (kombu's bindings have no expiry and piled up run after
    run); only under this run's prefix, never FLUSHDB: other runs share the database."""
    from django.conf import settings

    if settings.REDIS_URL and settings.REDIS_PREFIX == f"condor-test-{RUN}":
        import redis

        from tests.helpers.redis_keys import forget_run_keys

        try:
            forget_run_keys(settings.REDIS_URL, settings.REDIS_PREFIX)
        except redis.RedisError as error:  # best effort: the run's verdict stands
            sys.stderr.write(f"\nthis run's Redis keys ({settings.REDIS_PREFIX}*) were left behind: {error}\n")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(request, django_db_modify_db_settings_parallel_suffix):
    """Each run gets its own test database, test_<name>_<pid>, dropped at the end as usual.

    With --reuse-db the fixed name stays: reusing needs to find the database again.
    """
    from django.conf import settings

    if request.config.getvalue("reuse_db"):
        return
    for database in settings.DATABASES.values():
        if database["ENGINE"] == "django.db.backends.sqlite3":
            continue  # in memory: private to this process already
        test = database.setdefault("TEST", {})
        test["NAME"] = f"{test.get('NAME') or 'test_' + database['NAME']}_{RUN}"


@pytest.fixture
def catalog(db):
    seed_static_catalog()


@pytest.fixture
def ward_agent(db):
    return agent("ward-agent")


@pytest.fixture
def other_agent(db):
    return agent("other-agent")


@pytest.fixture
def api(ward_agent) -> APIClient:
    return api_for(ward_agent)


@pytest.fixture
def other_api(other_agent) -> APIClient:
    return api_for(other_agent)


def _persona(username: str, group_name: str):
    """A fixture named `username`: a new user of that name in `group_name`."""

    @pytest.fixture(name=username)
    def a_person(db) -> User:
        return person(username, group_name)

    return a_person


rita = _persona("rita", "reviewers")
rob = _persona("rob", "reviewers")  # a second reviewer: review teams, claims and four eyes need two
carl = _persona("carl", "compliance")
gina = _persona("gina", "governance")


@pytest.fixture
def reviewer_http(rita) -> Client:
    return logged_in(rita)


@pytest.fixture
def drain_now(monkeypatch):
    """The drainer without its margin for young events (runs/publish.py): the test drains what it just missed."""
    monkeypatch.setattr("runs.publish.DRAIN_AFTER_SECONDS", 0)


@pytest.fixture
def run_id(api, catalog) -> str:
    """A new executing run of the owner client's, with the tool catalog seeded."""
    return open_executing_run(api)


@pytest.fixture
def agent_http(api):
    """The owner agent's client that `parked` acts through: `api`, in process (tests/live/test_stream.py
    makes it the agent speaking to the live server)."""
    return api


@pytest.fixture
def parked(agent_http) -> tuple[str, dict]:
    """(run id, approval) for a run parked on a high-tier prescription, waiting for a reviewer."""
    return parked_run(agent_http)


def _flush_past_the_audit_triggers():
    """Between transactional tests Django empties every table with TRUNCATE, which the audit
    log's triggers refuse (from anyone, owner included). The test database's owner turns
    them off for that one flush transaction, as only an owner can; production never flushes.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.sql_flush
    guarded = ("approvals_auditevent", "approvals_auditchainhead")

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = original(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        tables_here = [table for table in guarded if table in tables]
        if not statements or not tables_here:
            return statements
        return [
            *(f"ALTER TABLE {table} DISABLE TRIGGER USER;" for table in tables_here),
            *statements,
            *(f"ALTER TABLE {table} ENABLE TRIGGER USER;" for table in tables_here),
        ]

    DatabaseOperations.sql_flush = sql_flush


_flush_past_the_audit_triggers()
