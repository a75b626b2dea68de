"""Losing the database connection.

Dead pooled connections are replaced before use, so a database restart costs no
failed request; a request that still cannot reach the database is 503
`database_unavailable` with Retry-After, in the API's error shape under /api/.
"""

import psycopg
import pytest
from django.db import OperationalError, connection, connections
from django.test import RequestFactory

from core import error_pages
from core.errors import DatabaseUnavailable

pytestmark = pytest.mark.django_db


def restart_the_database_under_the_pool() -> int:
    """Terminate every other backend on the test database, as a restart would, waiting until each is gone.

    Returns how many."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()[0]
    return killed


def lose_the_database(*args, **kwargs):
    raise OperationalError("server closed the connection unexpectedly")


# More dead connections than psycopg_pool's pauses between failed checks (one second, then
# two, four...) would get through within its ten-second timeout.
BUSY_POOL_SIZE = 8


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the flush also empties the groups
def test_a_database_restart_costs_no_failed_request(api):
    if connection.vendor != "postgresql" or connection.pool is None:
        pytest.skip("the connection pool is PostgreSQL's")
    # A pool of this test's own, as a server starts with: threads of earlier tests may
    # still count as holding connections of the shared one, leaving it no room to grow.
    connections.close_all()
    connection.close_pool()
    created = api.post("/api/v1/sessions/", {"title": "Bed 9"}, format="json")
    assert created.status_code == 201
    connections.close_all()  # this thread's connection goes back to the pool, idle
    pool = connection.pool
    busy = [pool.getconn() for _ in range(BUSY_POOL_SIZE)]  # the pool grown as on a busy server
    for conn in busy:
        pool.putconn(conn)
    assert restart_the_database_under_the_pool() >= BUSY_POOL_SIZE
    for _ in range(3):
        response = api.get(f"/api/v1/sessions/{created.json()['id']}/")
        assert response.status_code == 200, response.content


def test_an_api_request_that_loses_the_database_is_503(api, monkeypatch):
    monkeypatch.setattr("agents.auth.client_for_key", lose_the_database)
    response = api.get("/api/v1/sessions/")
    assert response.status_code == 503
    assert response.json() == {"error": "database_unavailable", "detail": DatabaseUnavailable.default_detail}
    assert int(response["Retry-After"]) > 0


def test_a_page_that_loses_the_database_is_a_plain_503(reviewer_http, monkeypatch):
    monkeypatch.setattr("inbox.views.is_reviewer", lose_the_database)
    response = reviewer_http.get("/inbox/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/plain")
    assert int(response["Retry-After"]) > 0


def test_a_database_error_outside_any_view_is_still_503():
    """handler500 sees what a middleware raised (saving the session, say)."""
    request = RequestFactory().get("/api/v1/sessions/")
    try:
        lose_the_database()
    except OperationalError:
        response = error_pages.server_error(request)
    assert response.status_code == 503
    assert response["Retry-After"]


def test_any_other_failure_stays_a_500():
    request = RequestFactory().get("/api/v1/sessions/")
    try:
        raise ValueError("a bug")
    except ValueError:
        response = error_pages.server_error(request)
    assert response.status_code == 500
