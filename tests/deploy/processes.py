"""Production processes (gunicorn, celery, make prod) as subprocesses of a test, always stopped.

Each runs in its own process group, so stopping it reaches everything it forked
(gunicorn's workers, celery's pool, honcho's children). A service is ready when
its log shows the line it prints once it serves; every wait has a deadline.
Stdlib only at import time.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.live.server import REPO

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

    def start(self) -> "Service":
        self.process = subprocess.Popen(self.argv, cwd=REPO, env=self.env, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self.ready = wait_for(lambda: self.ready_pattern.search(self.log()) or self._exited(),
                                  self.startup_timeout, f"{self.name} to start", lambda: self.log())
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

    def __enter__(self) -> "Service":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def wait_for(predicate, timeout: float, what: str, details=lambda: "", interval: float = 0.1):
    """Poll `predicate` until it returns something truthy; fail with `what` (and `details()`) after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{details()}")
        time.sleep(interval)


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


def gunicorn(env: dict[str, str]) -> Service:
    """gunicorn condor.wsgi on 127.0.0.1:<free port>, as the Procfile runs it (one worker here)."""
    return Service("gunicorn", [str(BIN / "gunicorn"), "condor.wsgi", "-k", "gthread", "--threads", "4", "-w", "1",
                                "-b", "127.0.0.1:0", "--no-control-socket", "--graceful-timeout", "4"],
                   env, ready=r"Listening at: http://127\.0\.0\.1:(\d+)")


def celery_worker(name: str, env: dict[str, str], *, beat_schedule: Path | None = None, concurrency: int = 1) -> Service:
    """`celery -A condor worker`, with an embedded beat when `beat_schedule` names its file."""
    argv = [str(BIN / "celery"), "-A", "condor", "worker", "--loglevel", "INFO", "-n", f"{name}@%h",
            "--concurrency", str(concurrency), "--without-mingle", "--without-gossip", "--without-heartbeat"]
    if beat_schedule is not None:
        argv += ["--beat", "--schedule", str(beat_schedule)]
    return Service(name, argv, env, ready=r"@\S+ ready\.")


PASS_DONE = re.compile(r"Task condor\.sweep\[[^\]]+\] succeeded in [\d.]+s: (\{.*\})")


def passes(log: str) -> list[dict]:
    """The counts of every sweep pass a worker's log reports, in order."""
    import ast

    return [ast.literal_eval(match.group(1)) for match in PASS_DONE.finditer(log)]
