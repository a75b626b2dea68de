"""Live-wire fixtures: one real daphne for the session, and the personas speaking to it over sockets.

Imports stay inside the fixtures: the browser tests in this folder also run
without a database.
"""

import pytest

# The browser fixtures, for every module here; a module may define its own instead
# (test_inbox_e2e.py's `chromium` and `inbox`).
from tests.live.inbox_fixtures import chromium, inbox, page  # noqa: F401 - pytest fixtures

# Short, so a test can watch an idle stream heartbeat.
STREAM_HEARTBEAT_SECONDS = 2
# A stream's heartbeat, and so its poll, on push_only_server: longer than any test runs.
PUSH_ONLY_HEARTBEAT_SECONDS = 3600
# A small pool, so anything that pins a connection (a stream waiting on a parked
# run, say) starves the server within a few requests instead of a few dozen.
DB_POOL_MAX = 4


def _daphne(heartbeat_seconds: int):
    """daphne on the test database and this run's Redis prefix, its stream polling every `heartbeat_seconds`."""
    from django.conf import settings
    from django.db import connection

    from tests.live.server import DaphneServer, database_url

    database = settings.DATABASES["default"]
    if connection.vendor != "postgresql":
        pytest.skip("the live server shares the test database with its own process: PostgreSQL only")
    env = {
        "DATABASE_URL": database_url(database),
        "SECRET_KEY": settings.SECRET_KEY,  # the session cookies made here must verify there
        "CONDOR_STREAM_HEARTBEAT_SECONDS": str(heartbeat_seconds),
        "CONDOR_DB_POOL_MIN": "1",
        "CONDOR_DB_POOL_MAX": str(DB_POOL_MAX),
    }
    if settings.REDIS_URL:
        env["REDIS_URL"] = settings.REDIS_URL
        env["CONDOR_CHANNEL_PREFIX"] = settings.REDIS_PREFIX
    return DaphneServer(env)


@pytest.fixture(scope="session")
def daphne_server(django_db_setup):
    """daphne serving condor.asgi:application on the test database and this run's Redis prefix.

    Tests that use it need `transactional_db`: the server is another process and
    only sees committed rows. And `serialized_rollback`, since the flush after each
    such test also empties the groups the migrations made.
    """
    with _daphne(STREAM_HEARTBEAT_SECONDS) as server:
        yield server


@pytest.fixture(scope="session")
def push_only_server(django_db_setup):
    """Like daphne_server, but its streams re-read the outbox only once an hour.

    So a frame a stream sends after its replay has come by the live push: no test
    has to tell a push from a poll by how soon the frame arrived.
    """
    with _daphne(PUSH_ONLY_HEARTBEAT_SECONDS) as server:
        yield server


@pytest.fixture
def live_agent(daphne_server, ward_agent, transactional_db, django_db_serialized_rollback):
    from tests.live.wire import LiveAgent

    return LiveAgent(daphne_server.host, ward_agent.raw_key)


@pytest.fixture
def other_live_agent(daphne_server, other_agent, transactional_db, django_db_serialized_rollback):
    from tests.live.wire import LiveAgent

    return LiveAgent(daphne_server.host, other_agent.raw_key)


@pytest.fixture
def live_reviewer(daphne_server, rita, transactional_db, django_db_serialized_rollback):
    from tests.live.wire import LiveBrowser

    return LiveBrowser(daphne_server.host, rita)


@pytest.fixture
def fresh_channel_layer():
    """A channel layer object of this test's own, dropped afterwards.

    Each in-process websocket test runs in its own event loop, but Channels caches one
    layer object per process, and channels_redis keeps asyncio locks on it: a receive
    cancelled at the wrong moment (a socket closing mid-message) leaves a lock bound
    to a loop that is gone, and a later test's receive() then fails with "bound to a
    different event loop". A daphne process has one loop for life, so this is a test
    concern only.
    """
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()
