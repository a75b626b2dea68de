"""A test run removes its own keys from the shared Redis when it ends, and only its own
(tests/helpers/redis_keys.py): kombu's `_kombu.binding.*` sets never expire and piled
up run after run, while other runs working on the same database must keep theirs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.conf import settings

from tests.helpers.redis_keys import forget_run_keys, own_key

REPO = Path(__file__).resolve().parent.parent
# A run of its own (not collected with the suite: not named test_*.py) that writes keys as a run does.
PROBE = "tests/redis_cleanup_probe.py"

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="the cleanup is of Redis keys")


@pytest.fixture
def client():
    connection = redis.Redis.from_url(settings.REDIS_URL)
    yield connection
    connection.close()


@pytest.mark.parametrize(
    ("key", "own"),
    [
        ("condor-test-77:_kombu.binding.celery", True),
        ("condor-test-77:group:inbox", True),
        ("condor-test-77specific.ab12!cd", True),
        ("condor-test-77-throttle:1:agent", True),
        ("condor-test-778:_kombu.binding.celery", False),
        ("condor-test-7:group:inbox", False),
        ("condor:_kombu.binding.celery", False),
    ],
)
def test_a_key_is_a_runs_own_only_under_its_exact_prefix(key, own):
    assert own_key(key, "condor-test-77") is own


def test_forgetting_a_run_removes_its_keys_and_no_one_elses(client):
    # Pid 0 is never a test run's; "condor-test-01" stands for another run on the same Redis.
    mine = [
        "condor-test-0:_kombu.binding.celery",
        "condor-test-0:group:inbox",
        "condor-test-0specific.x!y",
        "condor-test-0-throttle:1:agent",
    ]
    theirs = ["condor-test-01:_kombu.binding.celery", "condor-test-01specific.x!y"]
    for key in mine + theirs:
        client.set(key, "1", ex=300)
    try:
        assert forget_run_keys(settings.REDIS_URL, "condor-test-0") == len(mine)
        assert [key for key in mine + theirs if client.exists(key)] == theirs
    finally:
        client.delete(*theirs)


def test_a_run_leaves_none_of_its_keys_behind(client, tmp_path):
    report = tmp_path / "probe.json"
    env = {**os.environ, "CONDOR_REDIS_PROBE_REPORT": str(report)}
    probe = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert probe.returncode == 0, probe.stdout[-3000:] + probe.stderr[-3000:]
    seen = json.loads(report.read_text())
    assert len(seen["written"]) >= 3, seen  # the probe did write: binding, group, throttle count
    left = [
        key.decode() for key in client.scan_iter(match=f"{seen['prefix']}*") if own_key(key.decode(), seen["prefix"])
    ]
    assert left == []
