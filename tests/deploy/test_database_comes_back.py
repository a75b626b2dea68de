"""The database comes back and so does Condor: gunicorn and daphne serve the next request.

Every connection of the test database is ended from the server (pg_terminate_backend, what
a restart does to them), or the database refuses connections for a while and then takes
them again (a restart that takes its time). The servers' pools hold more dead connections
than psycopg_pool's pauses between failed checks would get through within its timeout,
and their reconnect attempts have been failing for long enough to back off far; yet the
next request, one at a time, is served.
"""

import contextlib
import http.client
import time

import psycopg
import pytest
from django.db import connection, connections
from psycopg import sql

from tests.deploy.processes import gunicorn
from tests.helpers.waits import HANG_SECONDS, wait_for
from tests.live.server import DaphneServer
from tests.live.wire import LiveAgent

POOL_SIZE = 8
# psycopg_pool's own pauses between reconnect attempts reach eight, then sixteen seconds by now.
DOWN_SECONDS = 16


@pytest.fixture(scope="module")
def servers(django_db_setup):
    """gunicorn and daphne on the test database, each pool's connections named for its server."""
    from django.conf import settings

    from tests.live.server import database_url

    if connection.vendor != "postgresql":
        pytest.skip("the connection pool is PostgreSQL's")
    env = {
        "SECRET_KEY": settings.SECRET_KEY,
        "CONDOR_DB_POOL_MIN": str(POOL_SIZE),
        "CONDOR_DB_POOL_MAX": str(POOL_SIZE + 4),
    }
    if settings.REDIS_URL:
        env |= {"REDIS_URL": settings.REDIS_URL, "CONDOR_CHANNEL_PREFIX": settings.REDIS_PREFIX}
    url = database_url(settings.DATABASES["default"])
    with contextlib.ExitStack() as stack:
        web = stack.enter_context(gunicorn({**env, "DATABASE_URL": f"{url}?application_name=gunicorn"}))
        web.host = f"127.0.0.1:{web.ready.group(1)}"
        asgi = stack.enter_context(DaphneServer({**env, "DATABASE_URL": f"{url}?application_name=daphne"}))
        yield {"gunicorn": web.host, "daphne": asgi.host}


@pytest.fixture
def agents(servers, ward_agent, transactional_db, django_db_serialized_rollback):
    """An agent on each server, whose pool holds POOL_SIZE idle connections."""
    agents = {name: LiveAgent(host, ward_agent.raw_key) for name, host in servers.items()}
    for name, agent in agents.items():
        assert agent.get("/api/v1/sessions/").status_code == 200  # the pool opens on first use
        wait_for(lambda name=name: backends_of(name) >= POOL_SIZE, HANG_SECONDS, f"{name}'s pool to fill")
    return list(agents.values())


def admin_connection() -> psycopg.Connection:
    """A connection to the server's maintenance database, which nothing here ends."""
    params = connection.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(name, None)
    return psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True)


def backends_of(server: str) -> int:
    with admin_connection() as admin:
        return admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
            [connection.settings_dict["NAME"], server],
        ).fetchone()[0]


def end_every_connection(admin) -> int:
    connections.close_all()  # this test's own connection back in its pool, idle, as between requests
    return admin.execute(
        "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity WHERE datname = %s",
        [connection.settings_dict["NAME"]],
    ).fetchone()[0]


@contextlib.contextmanager
def database_down():
    """The test database ends every connection and refuses new ones until the block ends."""
    name = sql.Identifier(connection.settings_dict["NAME"])
    with admin_connection() as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(name))
        try:
            end_every_connection(admin)
            yield
        finally:
            admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(name))


def request_left_waiting(agent) -> None:
    """A request whose client gives up at once: the server's pool meanwhile tries to connect, and fails."""
    conn = http.client.HTTPConnection(agent.host, timeout=1)
    try:
        conn.request("GET", "/api/v1/sessions/", headers={"Authorization": f"Api-Key {agent.key}"})
        conn.getresponse()
    except TimeoutError:
        pass
    finally:
        conn.close()


def assert_served_one_at_a_time(agents) -> None:
    for agent in agents:
        for _ in range(3):
            response = agent.get("/api/v1/sessions/")
            assert response.status_code == 200, (agent.host, response.content)


def test_the_request_after_every_connection_was_ended_is_served(agents):
    with admin_connection() as admin:
        assert end_every_connection(admin) >= 2 * POOL_SIZE
    assert_served_one_at_a_time(agents)


def test_the_request_after_the_database_was_down_is_served(agents):
    with database_down():
        for agent in agents:
            request_left_waiting(agent)
        time.sleep(DOWN_SECONDS)
    assert_served_one_at_a_time(agents)
