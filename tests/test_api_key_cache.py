"""The API-key lookup is cached a few seconds per process (condor/api_key_cache.py); revocation still holds."""

import pytest

from approvals.models import ApiClientKey
from condor import api_key_cache


@pytest.fixture(autouse=True)
def empty_cache():
    api_key_cache._entries.clear()
    yield
    api_key_cache._entries.clear()


def sessions(api):
    return api.get("/api/v1/sessions/").status_code


def test_a_key_revoked_through_the_orm_stops_at_once(api, ward_agent):
    assert sessions(api) == 200  # now cached
    key = ApiClientKey.objects.get(client=ward_agent)
    key.revoked = True
    key.save()
    assert sessions(api) == 401


def test_a_deleted_key_stops_at_once(api, ward_agent):
    assert sessions(api) == 200
    ApiClientKey.objects.get(client=ward_agent).delete()
    assert sessions(api) == 401


def test_a_bulk_revocation_holds_within_the_window_and_not_after(api, ward_agent, settings, monkeypatch):
    settings.CONDOR_API_KEY_CACHE_SECONDS = 5
    clock = [1000.0]
    monkeypatch.setattr(api_key_cache.time, "monotonic", lambda: clock[0])
    assert sessions(api) == 200
    ApiClientKey.objects.filter(client=ward_agent).update(revoked=True)  # no signal: another process, say
    assert sessions(api) == 200  # the documented window
    clock[0] += 5.1
    assert sessions(api) == 401


def test_with_the_cache_off_every_request_looks_the_key_up(api, ward_agent, settings):
    settings.CONDOR_API_KEY_CACHE_SECONDS = 0
    assert sessions(api) == 200
    ApiClientKey.objects.filter(client=ward_agent).update(revoked=True)
    assert sessions(api) == 401
