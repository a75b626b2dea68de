"""Sweeps without a broker (SPEC 9: no REDIS_URL → in-process fallbacks): a serving process sweeps on a
thread of its own; a management command never does."""

import os
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from condor import inprocess
from runs.models import Run
from tests.helpers.runs import open_executing_run

ROOT = Path(__file__).resolve().parent.parent.parent
SWEEPER = "import threading; print(any(t.name == 'condor-sweeper' for t in threading.enumerate()))"


def sweeper_running_after(setup: str, tmp_path, **env) -> bool:
    """Whether a fresh process has a sweeper thread after `setup` (Python), on a scratch SQLite file."""
    environ = {
        name: value
        for name, value in os.environ.items()
        if name not in ("REDIS_URL", "DATABASE_URL", "CONDOR_INPROCESS_SWEEPS")
    }
    environ.update(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", DJANGO_SETTINGS_MODULE="condor.settings", **env)
    done = subprocess.run(
        [sys.executable, "-c", f"{setup}; {SWEEPER}"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("entry_point", ["condor.wsgi", "condor.asgi"])
def test_a_serving_process_without_redis_sweeps(tmp_path, entry_point):
    assert sweeper_running_after(f"import {entry_point}", tmp_path)


def test_a_serving_process_with_redis_leaves_the_sweeps_to_celery_beat(tmp_path):
    assert not sweeper_running_after("import condor.wsgi", tmp_path, REDIS_URL="redis://127.0.0.1:6379/15")


def test_a_management_command_never_sweeps(tmp_path):
    setup = "import django; django.setup(); from django.core.management import call_command; call_command('check')"
    assert not sweeper_running_after(setup, tmp_path)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_sweeper_thread_closes_an_idle_run(api, settings, monkeypatch):
    settings.CONDOR_SWEEP_INTERVAL_SECONDS = 0.1
    monkeypatch.setattr(inprocess, "started", type(inprocess.started)())  # a process of its own, as it were
    run_id = open_executing_run(api)
    Run.objects.filter(pk=run_id).update(last_activity_at=timezone.now() - timedelta(days=1))
    stop = inprocess.start_sweeper()
    try:
        deadline = time.monotonic() + 20
        while Run.objects.get(pk=run_id).state != "aborted" and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        for thread in threading.enumerate():  # done before the test's database is flushed
            if thread.name == "condor-sweeper":
                thread.join(timeout=30)
    assert Run.objects.get(pk=run_id).terminal_reason == "sweep_idle"
