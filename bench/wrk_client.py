"""The issue's client for bench/hotpaths.py (`--client wrk`): wrk replaying a file of requests.

wrk is C, so its CPU a request is a small fraction of the 16 httpx threads' (~0.6–0.9 ms
a request, shared with the servers on two cores, which slows the bare endpoint more
than Condor). `apt-get install wrk`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "wrk_requests.lua"
THREADS = 2
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def available() -> bool:
    return shutil.which("wrk") is not None


def run(base: str, requests: list[tuple[str, dict]], *, connections: int, seconds: float,
        authorization: str | None = None) -> tuple[float, float]:
    """(requests/s, p50 ms) of wrk sending `requests` (path, body) to `base` for `seconds`, each at most once.

    Any answer but 2xx, a socket error, or a thread that ran out of requests ends the bench.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".requests", delete=False) as lines:
        for path, body in requests:
            lines.write(f"{path}\t{json.dumps(body, separators=(',', ':'))}\n")
    env = {**os.environ, "WRK_FILE": lines.name, "WRK_THREADS": str(THREADS)}
    if authorization:
        env["WRK_AUTH"] = authorization
    try:
        done = subprocess.run(["wrk", f"-t{THREADS}", f"-c{connections}", f"-d{seconds:g}s", "--latency",
                               "-s", str(SCRIPT), base], capture_output=True, text=True, env=env)
    finally:
        os.unlink(lines.name)
    out = done.stdout
    if done.returncode != 0 or re.search(r"Non-2xx|Socket errors|exhausted", out):
        raise SystemExit(f"wrk against {base} (exit {done.returncode}):\n{out}{done.stderr}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    value, unit = re.search(r"\s50%\s+([\d.]+)(us|ms|s)\b", out).groups()
    return rate, float(value) * _UNITS[unit]
