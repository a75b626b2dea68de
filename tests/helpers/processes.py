"""Processes a test starts and always stops: a `Service` (a server or worker, ready when its
log says so) and what the tests read of the process table.

Each service runs in its own process group, so stopping it reaches everything it forked
(gunicorn's workers, celery's pool, honcho's children). Stdlib only at import time, so
benches and the browser tests load it without Django settings.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.waits import wait_for

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


class Service:
    """`with Service(name, argv, env, ready=regex) as service:` → started, `service.ready` is the match."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], *, ready: str, startup_timeout: float = 90):
        self.name, self.argv, self.ready_pattern = name, argv, re.compile(ready)
        self.env = {**os.environ, "DJANGO_SETTINGS_MODULE": "condor.settings", **env}
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile("w+b", prefix=f"{name}-", suffix=".log", delete=False)

    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")

    def start(self) -> Service:
        self.process = subprocess.Popen(
            self.argv, cwd=REPO, env=self.env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            self.ready = wait_for(
                lambda: self.ready_pattern.search(self.log()) or self._exited(),
                self.startup_timeout,
                f"{self.name} to start",
                lambda: self.log(),
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _exited(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.log()}")

    def signal(self, signum: int) -> None:
        """Like a terminal's Ctrl-C (SIGINT) or a supervisor's SIGTERM: to the whole process group."""
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout)

    def stop(self, timeout: float = 20) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # the main process: gunicorn's master, celery's, shuts its children down
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        if self.process is not None:
            self.signal(signal.SIGKILL)  # whatever the group still holds (a worker that outlived its parent)
            self.process.wait()

    def close(self) -> None:
        self.stop()
        self._log.close()
        os.unlink(self._log.name)

    def __enter__(self) -> Service:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def _stat(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()  # after "(comm)": state ppid pgrp ...


def alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (children in their own sessions included), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) and fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found
