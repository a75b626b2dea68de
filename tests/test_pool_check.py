"""The pool tests a connection before handing it out, without a round trip when it can (condor/pool_check.py).

A connection handed out a moment ago with nothing to read goes out as it is; one the
server has ended, one idle for longer than IDLE_PING_SECONDS and one never handed out
get psycopg_pool's empty query, which refuses a dead one. A database restart still costs
no failed request (tests/test_database_unavailable.py).
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


@pytest.fixture
def raw():
    """A connection of its own to the test database, as the pool would hold it (autocommit)."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**params, autocommit=True) as conn:
        yield conn


def end_from_the_server(conn) -> None:
    """pg_terminate_backend, waiting until the backend is gone: what a restart does to it."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s, 5000)", [conn.info.backend_pid]).fetchone()[0]


@pytest.mark.django_db
def test_the_pool_uses_condors_check():
    assert connection.pool._check is pool_check.check_connection


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # its own pool, outside a test transaction
def test_the_pool_hands_out_a_connection_it_just_took_back_without_a_ping(pings):
    connections.close_all()
    pool = connection.pool
    pool.open(wait=True)
    # The pool hands its connections out in turn: once each, so that each is known to the check.
    held = [pool.getconn() for _ in range(pool.get_stats()["pool_available"])]
    for conn in held:
        pool.putconn(conn)
    pings.clear()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert pings == []


@pytest.mark.django_db
def test_a_connection_handed_out_just_now_is_not_pinged(raw, pings):
    pool_check.check_connection(raw)
    pings.clear()
    pool_check.check_connection(raw)
    assert pings == []


@pytest.mark.django_db
def test_a_connection_never_handed_out_is_pinged(raw, pings):
    pool_check.check_connection(raw)
    assert pings == [raw]


@pytest.mark.django_db
def test_a_connection_idle_past_the_limit_is_pinged(raw, pings, monkeypatch):
    pool_check.check_connection(raw)
    pings.clear()
    later = time.monotonic() + pool_check.IDLE_PING_SECONDS + 0.1
    monkeypatch.setattr(pool_check, "monotonic", lambda: later)
    pool_check.check_connection(raw)
    assert pings == [raw]


@pytest.mark.django_db
def test_a_connection_the_server_ended_is_refused_at_once(raw, pings):
    pool_check.check_connection(raw)
    end_from_the_server(raw)
    with pytest.raises(psycopg.OperationalError):
        pool_check.check_connection(raw)
    assert pings == [raw, raw]


@pytest.mark.django_db
def test_a_closed_connection_is_refused(raw):
    pool_check.check_connection(raw)
    raw.close()
    with pytest.raises(psycopg.OperationalError):
        pool_check.check_connection(raw)
