"""Settings come from the environment (SPEC section 9).

Each case starts a fresh interpreter with a controlled environment, because
settings are read once per process at import time.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json
from django.conf import settings
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "options": settings.DATABASES["default"].get("OPTIONS", {}),
    "channel_layer": settings.CHANNEL_LAYERS["default"]["BACKEND"],
    "debug": settings.DEBUG,
    "allowed_hosts": settings.ALLOWED_HOSTS,
    "approval_ttl": settings.CONDOR_APPROVAL_TTL_SECONDS,
    "suspend_ttl": settings.CONDOR_SUSPEND_TTL_SECONDS,
    "idle_timeout": settings.CONDOR_IDLE_TIMEOUT_SECONDS,
    "sweep_interval": settings.CONDOR_SWEEP_INTERVAL_SECONDS,
}, default=str))
"""


def start(probe: str = PROBE, **env) -> subprocess.CompletedProcess:
    """Run `probe` after loading Condor's settings in a new process whose environment is exactly `env` (plus PATH)."""
    environment = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "condor.settings",
        "SECRET_KEY": "test-only-secret",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )


def settings_from(**env) -> dict:
    process = start(**env)
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout.strip().splitlines()[-1])


def test_no_configuration_runs_on_sqlite_with_an_in_memory_channel_layer():
    loaded = settings_from()
    assert loaded["engine"] == "django.db.backends.sqlite3"
    assert loaded["channel_layer"] == "channels.layers.InMemoryChannelLayer"
    assert loaded["debug"] is False


def test_defaults_for_the_condor_timeouts():
    loaded = settings_from()
    assert (loaded["approval_ttl"], loaded["suspend_ttl"], loaded["idle_timeout"], loaded["sweep_interval"]) == (
        900,
        3600,
        600,
        30,
    )


def test_database_url_switches_to_postgresql_with_a_connection_pool():
    loaded = settings_from(DATABASE_URL="postgres://condor:pw@db.internal:5432/condor")
    assert loaded["engine"] == "condor.postgresql"  # Django's backend, testing each connection it takes from its pool
    assert set(loaded["options"]["pool"]) >= {"min_size", "max_size"}


def test_postgresql_binds_parameters_on_the_server_and_prepares_repeated_statements():
    loaded = settings_from(DATABASE_URL="postgres://condor:pw@db.internal:5432/condor")
    assert loaded["options"]["server_side_binding"] is True
    assert loaded["options"]["prepare_threshold"] == 5


def test_preparing_can_be_turned_off_for_a_pooler_that_cannot_keep_them():
    loaded = settings_from(DATABASE_URL="postgres://condor:pw@db.internal:5432/condor", CONDOR_DB_PREPARE_THRESHOLD="0")
    assert loaded["options"]["prepare_threshold"] is None


def test_redis_url_switches_to_the_redis_channel_layer():
    loaded = settings_from(REDIS_URL="redis://cache.internal:6379/0")
    assert loaded["channel_layer"] == "core.channel_layer.RedisLayer"


def test_environment_overrides_are_read():
    loaded = settings_from(
        DEBUG="true", ALLOWED_HOSTS="condor.example, api.condor.example", CONDOR_APPROVAL_TTL_SECONDS="120"
    )
    assert loaded["debug"] is True
    assert loaded["allowed_hosts"] == ["condor.example", "api.condor.example"]
    assert loaded["approval_ttl"] == 120


@pytest.mark.parametrize(
    "variable, value",
    [
        ("DATABASE_URL", "mysql://x"),
        ("REDIS_URL", "http://x"),
        ("CONDOR_APPROVAL_TTL_SECONDS", "abc"),
        ("CONDOR_APPROVAL_TTL_SECONDS", "0"),
        ("CONDOR_SUSPEND_TTL_SECONDS", "-5"),
        ("CONDOR_IDLE_TIMEOUT_SECONDS", "ten"),
        ("CONDOR_SWEEP_INTERVAL_SECONDS", "1.5"),
        ("DEBUG", "maybe"),
        ("SECURE_PROXY_SSL_HEADER", "https"),
        ("CONDOR_THROTTLE_RATE_GATE", "fast"),
        ("CONDOR_THROTTLE_RATE", "0/minute"),
        ("CONDOR_SESSION_AGE_SECONDS", "8h"),
        ("CONDOR_LOGIN_COOLOFF_SECONDS", "0"),
        ("CONDOR_MAX_PENDING_PER_CLIENT", "many"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(variable, value):
    process = start(**{variable: value})
    assert process.returncode != 0
    assert "ImproperlyConfigured" in process.stderr
    assert variable in process.stderr


BEAT_PROBE = """
import json
from django.conf import settings
print(json.dumps({name: entry["schedule"] for name, entry in settings.CELERY_BEAT_SCHEDULE.items()}))
"""


def beat_schedule(**env) -> dict:
    process = start(BEAT_PROBE, **env)
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout.strip().splitlines()[-1])


def test_beat_writes_audit_checkpoints_once_their_file_is_named():
    assert "condor-audit-checkpoint" not in beat_schedule()
    named = beat_schedule(CONDOR_AUDIT_CHECKPOINT_FILE="/var/lib/condor/audit-checkpoints.jsonl")
    assert named["condor-audit-checkpoint"] == 300
    every_minute = beat_schedule(
        CONDOR_AUDIT_CHECKPOINT_FILE="/var/lib/condor/audit-checkpoints.jsonl", CONDOR_AUDIT_CHECKPOINT_SECONDS="60"
    )
    assert every_minute["condor-audit-checkpoint"] == 60
