"""A connection from the pool is tested before use, without a round trip when it can be (condor/pool_check.py).

A connection handed out a moment ago with nothing to read goes out as it is; one the
server has ended, one idle for longer than IDLE_PING_SECONDS and one never handed out
get psycopg_pool's empty query, which refuses a dead one. The first dead one found has
the pool test every idle connection at once (condor/postgresql/base.py), so a database
restart costs no failed request (tests/test_database_unavailable.py, tests/deploy).
"""

import time

import psycopg
import pytest
from django.db import connection, connections
from psycopg_pool import ConnectionPool

from condor import pool_check

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the connection pool is PostgreSQL's")


@pytest.fixture
def pings(monkeypatch) -> list:
    """The connections psycopg_pool's own check (the empty query) runs on, from now on."""
    pinged = []
    ping = ConnectionPool.check_connection

    def counted(conn):
        pinged.append(conn)
        ping(conn)

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(counted))
    return pinged


def connect_alone(**options) -> psycopg.Connection:
    """A connection of its own to the test database, outside Django's pool."""
    params = connection.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(name, None)
    return psycopg.connect(**params, **options)


@pytest.fixture
def raw():
    """A connection as the pool would hold it (autocommit)."""
    with connect_alone(autocommit=True) as conn:
        yield conn


def end_from_the_server(conn) -> None:
    """pg_terminate_backend, waiting until the backend is gone: what a restart does to it."""
    with connect_alone(autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s, 5000)", [conn.info.backend_pid]).fetchone()[0]


def hand_out_every_pooled_connection() -> None:
    """Django takes each idle connection once (the pool hands them out in turn), so each is known to the check."""
    for _ in range(connection.pool.get_stats()["pool_available"]):
        connection.ensure_connection()
        connections.close_all()


@pytest.mark.django_db
def test_the_pool_runs_no_check_of_its_own():
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is False  # Django would give it a ping per request


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # its own pool, outside a test transaction
def test_django_takes_a_connection_it_just_gave_back_without_a_ping(pings):
    connections.close_all()
    connection.pool.open(wait=True)
    hand_out_every_pooled_connection()
    pings.clear()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert pings == []


@pytest.mark.django_db
def test_a_connection_handed_out_just_now_is_not_pinged(raw, pings):
    pool_check.fit_to_hand_out(raw)
    pings.clear()
    assert pool_check.fit_to_hand_out(raw)
    assert pings == []


@pytest.mark.django_db
def test_a_connection_never_handed_out_is_pinged(raw, pings):
    assert pool_check.fit_to_hand_out(raw)
    assert pings == [raw]


@pytest.mark.django_db
def test_a_connection_idle_past_the_limit_is_pinged(raw, pings, monkeypatch):
    pool_check.fit_to_hand_out(raw)
    pings.clear()
    later = time.monotonic() + pool_check.IDLE_PING_SECONDS + 0.1
    monkeypatch.setattr(pool_check, "monotonic", lambda: later)
    assert pool_check.fit_to_hand_out(raw)
    assert pings == [raw]


@pytest.mark.django_db
def test_a_connection_the_server_ended_is_refused_at_once(raw, pings):
    pool_check.fit_to_hand_out(raw)
    end_from_the_server(raw)
    assert not pool_check.fit_to_hand_out(raw)
    assert pings == [raw, raw]
    assert raw.closed


@pytest.mark.django_db
def test_a_closed_connection_is_refused(raw):
    pool_check.fit_to_hand_out(raw)
    raw.close()
    assert not pool_check.fit_to_hand_out(raw)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_one_dead_connection_has_the_pool_test_every_idle_one(pings):
    connections.close_all()
    pool = connection.pool
    pool.open(wait=True)
    hand_out_every_pooled_connection()
    idle, lost = pool.get_stats()["pool_available"], pool.get_stats().get("connections_lost", 0)
    with connect_alone(autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    pings.clear()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert len(pings) == idle  # the one Django took first, then the others left idle
    assert pool.get_stats()["connections_lost"] - lost == idle - 1
