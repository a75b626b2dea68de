"""Where a push's coroutine runs (runs/publish.py): under gunicorn, on one event loop per request thread,
kept between pushes with its Redis connection; elsewhere through async_to_sync."""

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from channels.layers import get_channel_layer

from runs import publish

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def loops_of_pushes(monkeypatch) -> list:
    """The event loop each group_send ran on."""
    layer = get_channel_layer()
    loops, real_send = [], layer.group_send

    async def recording_send(group, message):
        loops.append(asyncio.get_running_loop())
        await real_send(group, message)

    monkeypatch.setattr(layer, "group_send", recording_send)
    return loops


def two_pushes_from_a_thread_of_their_own() -> None:
    def push_twice():
        publish.send_to_group("run.loops", {"type": "run.event", "event_id": 0, "terminal": False})
        publish.send_to_group("run.loops", {"type": "run.event", "event_id": 1, "terminal": False})
        runner = getattr(publish.thread_loops, "runner", None)
        if runner is not None:
            runner.close()  # the thread ends here; a gunicorn thread keeps its loop for life

    thread = threading.Thread(target=push_twice)
    thread.start()
    thread.join()


def test_a_long_lived_threads_pushes_share_its_loop(monkeypatch, loops_of_pushes):
    monkeypatch.setattr(publish, "_loop_per_thread", True)
    two_pushes_from_a_thread_of_their_own()
    assert len(loops_of_pushes) == 2 and loops_of_pushes[0] is loops_of_pushes[1]


def test_elsewhere_each_push_goes_through_async_to_sync(monkeypatch, loops_of_pushes):
    monkeypatch.setattr(publish, "_loop_per_thread", False)
    two_pushes_from_a_thread_of_their_own()
    assert len(loops_of_pushes) == 2 and loops_of_pushes[0] is not loops_of_pushes[1]


@pytest.mark.parametrize(("entry_point", "kept"), [("condor.wsgi", True), ("condor.asgi", False)])
def test_only_the_wsgi_entry_point_keeps_a_loop_per_thread(tmp_path, entry_point, kept):
    environ = {name: value for name, value in os.environ.items() if name not in ("REDIS_URL", "DATABASE_URL")}
    environ.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        DJANGO_SETTINGS_MODULE="condor.settings",
        CONDOR_INPROCESS_SWEEPS="0",
    )
    done = subprocess.run(
        [sys.executable, "-c", f"import {entry_point}; from runs import publish; print(publish._loop_per_thread)"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == str(kept)
