"""Run by tests/test_run_isolation.py, twice at once, as two pytest runs of their own (never collected with
the suite: not named test_*.py), both on the same DATABASE_URL and REDIS_URL as two `make test` runs are.

Each writes what it holds to its report, then waits until the other run has written too, and
checks that meanwhile nothing of its own was touched: its database still holds its row and
its Redis key its value, while the other run holds the same names under its own prefix.
"""

import json
import os
import time
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection

from agents.models import ApiClient

RUNS = 2
WAIT_SECONDS = 240


def reports(folder: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def test_probe_holds_its_own_database_and_keys_while_another_run_works(transactional_db):
    folder = Path(os.environ["CONDOR_ISOLATION_PROBE_DIR"])
    client = redis.Redis.from_url(settings.REDIS_URL)
    mine = str(os.getpid())
    try:
        ApiClient.objects.create(name=f"isolation probe {mine}")
        client.set(f"{settings.REDIS_PREFIX}:probe", mine, ex=WAIT_SECONDS)
        report = {"pid": mine, "database": connection.settings_dict["NAME"], "prefix": settings.REDIS_PREFIX}
        (folder / f"{mine}.tmp").write_text(json.dumps(report))
        (folder / f"{mine}.tmp").rename(folder / f"{mine}.json")  # whole, or not at all, to the other run

        deadline = time.monotonic() + WAIT_SECONDS
        while len(reports(folder)) < RUNS:
            assert time.monotonic() < deadline, "the other run never got as far as its test"
            time.sleep(0.2)
        # The other run is at the same point now: it has made its database and written its key.
        probes = ApiClient.objects.filter(name__startswith="isolation probe ")
        assert list(probes.values_list("name", flat=True)) == [f"isolation probe {mine}"]
        assert client.get(f"{settings.REDIS_PREFIX}:probe") == mine.encode()
    finally:
        client.delete(f"{settings.REDIS_PREFIX}:probe")
        client.close()
