"""The CPU time a served checkout spends: its gunicorn workers' and their PostgreSQL backends', from /proc.

CPU time a request moves far less with the machine's load than requests a second do: on a
shared machine it is the steadier of the two. Both servers must run on this machine (the
backends' figure is left out when PostgreSQL runs elsewhere).
"""

from __future__ import annotations

import os
from pathlib import Path

import psycopg


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system, all threads) process `pid` has used; None if it is not here."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    return found


class ServerCpu:
    """Reads of the CPU time of gunicorn `master`'s workers and of every other backend on `database_url`."""

    def __init__(self, master: int, database_url: str):
        self.master = master
        self.monitor = psycopg.connect(database_url, autocommit=True)

    def read(self) -> dict[int, float]:
        """Each process's CPU seconds so far (backends negated in key: -pid, so pids never collide)."""
        backends = [
            row[0]
            for row in self.monitor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
        seconds = {pid: cpu_seconds(pid) for pid in children(self.master)}
        seconds |= {-pid: cpu_seconds(pid) for pid in backends}
        return {pid: value for pid, value in seconds.items() if value is not None}

    @staticmethod
    def spent(before: dict[int, float], after: dict[int, float]) -> float:
        """CPU seconds spent between two reads (a process that appeared in between counts from zero)."""
        return sum(value - before.get(pid, 0.0) for pid, value in after.items())

    def close(self) -> None:
        self.monitor.close()
