"""Request rates per API client (issue 9, item 8): a runaway agent is slowed, nobody else is.

The key is the client, not the address; the gate (tool calls, clarifications)
counts in its own bucket; reviewers are not throttled here (their login is).
Time is frozen inside one window so a window edge cannot make a test flaky.
"""

import time
from types import SimpleNamespace

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

from agents import throttling
from core.redis_client import shared
from tests.helpers.approval_loop import clarify, gate, suspend
from tests.helpers.runs import open_executing_run

NOW = 1_000_030.0  # 10 s into a one-minute window (1,000,020 is a multiple of 60)
DEFAULT_LIMIT, GATE_LIMIT = 4, 2


@pytest.fixture(autouse=True)
def small_rates(settings, monkeypatch):
    settings.CONDOR_THROTTLE_RATES = {"default": (DEFAULT_LIMIT, 60), "gate": (GATE_LIMIT, 60)}
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: NOW, monotonic=time.monotonic))
    monkeypatch.setattr(throttling, "cache_paused_until", 0.0)


def use_up(api, requests: int, **extra):
    for _ in range(requests):
        assert api.get("/api/v1/sessions/", **extra).status_code == 200


def test_a_client_past_its_rate_is_429_throttled_with_retry_after(api):
    use_up(api, DEFAULT_LIMIT)
    response = api.get("/api/v1/sessions/")
    assert response.status_code == 429
    assert response.json()["error"] == "throttled"
    assert response["Retry-After"] == "50"  # the rest of the window


def test_the_key_is_the_client_not_the_address(api):
    use_up(api, DEFAULT_LIMIT, REMOTE_ADDR="10.0.0.1")
    assert api.get("/api/v1/sessions/", REMOTE_ADDR="10.0.0.2").status_code == 429


def test_another_client_on_the_same_address_is_not_slowed(api, other_api):
    use_up(api, DEFAULT_LIMIT)
    assert api.get("/api/v1/sessions/").status_code == 429
    assert other_api.get("/api/v1/sessions/").status_code == 200


def test_the_gate_has_a_bucket_of_its_own(api, settings):
    settings.CONDOR_THROTTLE_RATES = {"default": (3, 60), "gate": (GATE_LIMIT, 60)}
    run_id = open_executing_run(api)  # three default-scope requests: that bucket is now full
    assert api.get("/api/v1/sessions/").status_code == 429
    for n in range(GATE_LIMIT):
        suspend(api, run_id, tool_call_id=f"call-{n}", step_id=f"step-{n}")
    assert gate(api, run_id, tool_call_id="call-x", step_id="step-x").status_code == 429
    missing = [{"name": "route"}]
    assert clarify(api, run_id, missing, tool_call_id="call-y", step_id="step-y").status_code == 429


def test_a_windows_count_expires_after_its_window(api, ward_agent, settings):
    use_up(api, 1)
    cache, key = caches["throttle"], f"default:{ward_agent.pk}:{int(NOW // 60)}"
    assert cache.get(key) == 1  # the cache's own key and value: the throttle and the cache agree
    if isinstance(cache, RedisCache):  # as `make test` runs: Redis drops it a second after the window's length
        assert 0 < shared(settings.CACHES["throttle"]["LOCATION"]).ttl(cache.make_key(key)) <= 61


def test_reviewers_are_not_throttled(api, reviewer_http):
    approval = suspend(api, open_executing_run(api))
    for _ in range(DEFAULT_LIMIT + 2):
        assert reviewer_http.get(f"/api/v1/approvals/{approval['id']}/").status_code == 200


def test_a_rate_of_off_does_not_throttle(api, settings):
    settings.CONDOR_THROTTLE_RATES = {"default": None, "gate": None}
    use_up(api, DEFAULT_LIMIT + 2)


def test_an_unreachable_throttle_cache_lets_requests_through_and_is_left_alone_a_while(api, monkeypatch, settings):
    asked = []
    count = throttling.window_count

    def counted(*args):
        asked.append(args)
        return count(*args)

    def unreachable(*args, **kwargs):
        raise ConnectionError("Redis is down")

    # Nothing listens on port 1: Redis (which the throttle asks itself) refuses at once. Without
    # Redis the throttle counts in its cache, which is made to fail here too.
    monkeypatch.setattr(throttling, "window_count", counted)
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {**settings.CACHES["throttle"], "LOCATION": "redis://127.0.0.1:1/0"},
    }
    monkeypatch.setattr(caches["throttle"], "incr", unreachable)
    monkeypatch.setattr(caches["throttle"], "add", unreachable)
    use_up(api, DEFAULT_LIMIT + 2)
    assert len(asked) == 1  # one timeout, then the requests go straight through
