"""GET runs/{id}/stream reached through WSGI (gunicorn): a clear 400 at once, never a held thread.

django.test.Client is a WSGI client, so these requests take the path a gunicorn
worker would.
"""

import pytest

from tests.helpers.approval_loop import suspend
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db


def stream(api, run_id):
    return api.get(f"/api/v1/runs/{run_id}/stream")


def test_a_parked_runs_stream_under_wsgi_is_refused_naming_the_daphne_route(api, catalog):
    run_id = open_executing_run(api)
    suspend(api, run_id)  # parked: a stream served here would wait for a human

    response = stream(api, run_id)

    assert response.status_code == 400
    assert not response.streaming
    body = response.json()
    assert body["error"] == "stream_requires_asgi"
    assert "daphne" in body["detail"] and "/api/v1/runs/{id}/stream" in body["detail"]


def test_ownership_is_still_checked_first(api, other_api, catalog):
    run_id = open_executing_run(api)
    assert stream(other_api, run_id).status_code == 404
    assert stream(api.__class__(), run_id).status_code == 401
