"""Two test runs at once on one machine do not meet (tests/conftest.py): `make test` hands every
checkout the same DATABASE_URL (`condor`) and REDIS_URL (`/0`), so each run names its own test
database `test_<name>_<pid>` and puts its Redis keys under `condor-test-<pid>`, and the servers
and workers it starts are given both."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

REPO = Path(__file__).resolve().parent.parent
# Runs of their own (not collected with the suite: not named test_*.py), started here two at once.
PROBE = "tests/run_isolation_probe.py"


@pytest.mark.django_db
def test_the_test_database_is_named_for_this_run():
    if connection.vendor == "sqlite":
        pytest.skip("SQLite's test database is in memory, private to the run already")
    name = connection.settings_dict["NAME"]
    assert name == connection.settings_dict["TEST"]["NAME"]
    assert name.startswith("test_") and name.endswith(f"_{os.getpid()}")


@pytest.mark.skipif(not settings.REDIS_URL, reason="without Redis every store is in the process")
def test_every_redis_key_of_this_run_carries_its_prefix():
    prefix = f"condor-test-{os.getpid()}"
    assert settings.REDIS_PREFIX == prefix
    assert settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] == prefix
    assert {name: settings.CACHES[name]["KEY_PREFIX"] for name in ("throttle", "api_keys")} == {
        "throttle": f"{prefix}-throttle",
        "api_keys": f"{prefix}-api_keys",
    }
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS == {"global_keyprefix": f"{prefix}:"}


@pytest.mark.timeout(600)
@pytest.mark.skipif(
    not settings.REDIS_URL or not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="two runs meet only in a shared PostgreSQL and Redis",
)
def test_two_runs_at_once_on_the_same_urls_each_keep_their_own_database_and_keys(tmp_path):
    env = {**os.environ, "CONDOR_ISOLATION_PROBE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROBE]
    runs = [
        subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=540)[0] for run in runs]
    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output[-3000:]
    first, second = (json.loads(path.read_text()) for path in sorted(tmp_path.glob("*.json")))
    assert first["database"] != second["database"] and first["prefix"] != second["prefix"]
