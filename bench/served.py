"""A checkout's WSGI application under gunicorn, as the benchmarks serve it (gthread)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

# Longer than the client keeps an idle connection (http_load.CLIENT_KEEPALIVE_SECONDS).
SERVER_KEEPALIVE_SECONDS = 30


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Gunicorn:
    """`gunicorn condor.wsgi -k gthread` from `tree`, with `env` on top of this process's environment.

    `start()` several, then `wait()` for each (they boot at once); `stop()` never leaves one behind.
    """

    def __init__(self, tree: Path, env: dict, *, workers: int, threads: int):
        self.tree, self.env = tree, env
        self.workers, self.threads = workers, threads
        self.process: subprocess.Popen | None = None
        self.base = ""

    def start(self) -> None:
        port = free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "condor.wsgi",
                "-k",
                "gthread",
                "--workers",
                str(self.workers),
                "--threads",
                str(self.threads),
                "--keep-alive",
                str(SERVER_KEEPALIVE_SECONDS),
                "-b",
                f"127.0.0.1:{port}",
                "--log-level",
                "warning",
            ],
            cwd=self.tree,
            env={**os.environ, **self.env},
        )
        self.base = f"http://127.0.0.1:{port}"

    def wait(self) -> None:
        """Returns once it answers."""
        deadline = time.monotonic() + 120  # a loaded machine takes its time importing Django
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"gunicorn (from {self.tree}) exited with {self.process.returncode}")
            try:
                httpx.get(self.base + "/", timeout=1)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        self.stop()
        raise SystemExit(f"gunicorn (from {self.tree}) did not answer")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:  # a loaded machine can take gunicorn past 10 s to stop; never leave one behind
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
