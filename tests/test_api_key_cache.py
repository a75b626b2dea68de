"""The API-key lookup is kept in Django's cache for a window (agents/api_key_cache.py); revocation still holds."""

import time

import pytest
from django.core.cache import caches

from agents import api_key_cache
from agents.api_key_cache import CACHE, key_hash
from agents.models import ApiClient, ApiClientKey
from tests.helpers.approval_loop import gate


def sessions(api):
    return api.get("/api/v1/sessions/").status_code


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """A block whose writes count as committed: what the test's transaction holds back runs at its end."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def test_a_key_revoked_through_the_orm_stops_at_once(api, ward_agent, committed):
    assert sessions(api) == 200  # now cached
    key = ApiClientKey.objects.get(client=ward_agent)
    key.revoked = True
    with committed():
        key.save()
    assert sessions(api) == 401


def test_a_deleted_key_stops_at_once(api, ward_agent, committed):
    assert sessions(api) == 200
    with committed():
        ApiClientKey.objects.get(client=ward_agent).delete()
    assert sessions(api) == 401


def test_a_deleted_client_stops_at_once(api, ward_agent, committed):
    assert sessions(api) == 200
    with committed():
        ApiClient.objects.get(pk=ward_agent.pk).delete()
    assert sessions(api) == 401


def test_a_changed_client_is_not_served_as_it_was(api, ward_agent, run_id, committed):
    assert gate(api, run_id, step_id="s-1", tool_call_id="c-1").json()["decision"] == "suspended"
    client = ApiClient.objects.get(pk=ward_agent.pk)
    client.can_park = False
    with committed():
        client.save()
    assert gate(api, run_id, step_id="s-2", tool_call_id="c-2").json()["decision"] == "blocked"


def test_a_revocation_strikes_the_cache_every_process_reads(api, ward_agent, committed):
    assert sessions(api) == 200
    name = key_hash(ward_agent.raw_key)
    client, _ = caches[CACHE].get(name)
    assert client == ward_agent
    with committed():
        ApiClientKey.objects.get(client=ward_agent).delete()
    assert caches[CACHE].get(name) == api_key_cache.STRUCK


def test_a_bulk_revocation_holds_within_the_window_and_not_after(api, ward_agent, settings):
    settings.CONDOR_API_KEY_CACHE_SECONDS = 1
    assert sessions(api) == 200
    ApiClientKey.objects.filter(client=ward_agent).update(revoked=True)  # no signal: like SQL from outside
    assert sessions(api) == 200  # the documented window
    time.sleep(1.2)
    assert sessions(api) == 401


def test_with_the_cache_off_every_request_looks_the_key_up(api, ward_agent, settings):
    settings.CONDOR_API_KEY_CACHE_SECONDS = 0
    assert sessions(api) == 200
    ApiClientKey.objects.filter(client=ward_agent).update(revoked=True)
    assert sessions(api) == 401


def test_the_cache_holds_the_keys_hash_never_the_key(api, ward_agent, monkeypatch):
    written = []
    cache = caches[CACHE]
    add = cache.add
    monkeypatch.setattr(cache, "add", lambda key, value, **kw: written.append((key, value)) or add(key, value, **kw))
    assert sessions(api) == 200
    secret = ward_agent.raw_key.partition(".")[2]
    assert [key for key, _ in written] == [ApiClientKey.objects.get(client=ward_agent).hashed_key]
    assert secret not in repr(written)


@pytest.fixture
def unreachable_cache(monkeypatch):
    def unreachable(*args, **kwargs):
        raise ConnectionError("cache down")

    cache = caches[CACHE]
    for method in ("get", "add", "set_many"):
        monkeypatch.setattr(cache, method, unreachable)
    monkeypatch.setattr(api_key_cache, "paused_until", 0.0)
    yield
    api_key_cache.paused_until = 0.0


def test_with_the_cache_down_keys_are_checked_in_the_database(api, ward_agent, unreachable_cache):
    assert sessions(api) == 200
    ApiClientKey.objects.filter(client=ward_agent).update(revoked=True)
    assert sessions(api) == 401
