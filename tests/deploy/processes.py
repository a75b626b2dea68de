"""Production processes (gunicorn, celery, make prod) as services of a test (tests/helpers/processes.py),
and what a sweep worker's log says it did.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.processes import BIN, Service


def gunicorn(env: dict[str, str]) -> Service:
    """gunicorn condor.wsgi on 127.0.0.1:<free port>, as the Procfile runs it (one worker here)."""
    return Service(
        "gunicorn",
        [
            str(BIN / "gunicorn"),
            "condor.wsgi",
            "-k",
            "gthread",
            "--threads",
            "4",
            "-w",
            "1",
            "-b",
            "127.0.0.1:0",
            "--no-control-socket",
            "--graceful-timeout",
            "4",
        ],
        env,
        ready=r"Listening at: http://127\.0\.0\.1:(\d+)",
    )


def celery_worker(
    name: str, env: dict[str, str], *, beat_schedule: Path | None = None, concurrency: int = 1
) -> Service:
    """`celery -A condor worker`, with an embedded beat when `beat_schedule` names its file."""
    argv = [
        str(BIN / "celery"),
        "-A",
        "condor",
        "worker",
        "--loglevel",
        "INFO",
        "-n",
        f"{name}@%h",
        "--concurrency",
        str(concurrency),
        "--without-mingle",
        "--without-gossip",
        "--without-heartbeat",
    ]
    if beat_schedule is not None:
        argv += ["--beat", "--schedule", str(beat_schedule)]
    return Service(name, argv, env, ready=r"@\S+ ready\.")


PASS_DONE = re.compile(r"Task condor\.sweep\[[^\]]+\] succeeded in [\d.]+s: (\{.*\})")


def passes(log: str) -> list[dict]:
    """The counts of every sweep pass a worker's log reports, in order."""
    import ast

    return [ast.literal_eval(match.group(1)) for match in PASS_DONE.finditer(log)]
