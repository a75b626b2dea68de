"""The documentation's examples as written: a fenced block found by its marker, and a way to run a shell one.

A block a test runs is preceded by `<!-- readme-test: NAME … -->`, so the test reads
the text a reader copies rather than a copy of it that could drift.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.processes import REPO


def fenced_block(name: str, document: Path = REPO / "README.md") -> str:
    """The fenced code block right after the `readme-test: NAME` marker in `document`."""
    found = re.findall(
        rf"^<!-- readme-test: {re.escape(name)}\b[^\n]*-->\n```[a-z]*\n(.*?)^```$",
        document.read_text(),
        flags=re.M | re.S,
    )
    assert len(found) == 1, f"{document.name} has {len(found)} blocks marked readme-test: {name}"
    return found[0]


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_shell(script: str, *, cwd: Path, env: dict[str, str], timeout: float) -> Finished:
    """`script` under bash (stop at the first failing command or pipeline), in a process group of its own.

    As a reader's shell would: no PYTHONPATH, so Python finds only what its environment
    has installed. Output goes to files, not pipes: a process the script leaves behind
    cannot keep the test waiting for the end of a pipe. Whatever it started is killed
    afterwards, and a script still running after `timeout` seconds fails the test
    instead of hanging it.
    """
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    with tempfile.TemporaryDirectory(prefix="readme-") as logs:
        return _run(script, cwd, {**environment, **env}, timeout, Path(logs))


def _run(script: str, cwd: Path, env: dict[str, str], timeout: float, logs: Path) -> Finished:
    out, err = logs / "stdout", logs / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {timeout} s:\n{out.read_text()}\n{err.read_text()}") from None
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
    return Finished(returncode, out.read_text(), err.read_text())
