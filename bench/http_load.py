"""The benchmarks' HTTP client: httpx clients kept alive, and threads that send prepared requests."""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass

import httpx

# gunicorn closes a kept-alive connection after --keep-alive seconds (2 by default), and
# does so with a plain close(): a request the client sends on it at that moment is answered
# with a TCP reset ("Connection reset by peer"). httpx reuses an idle connection for up to
# 5 s, and a client here idles for seconds while the others prepare their requests, so the
# server must keep connections open longer than the client does (served.py: 30 s).
CLIENT_KEEPALIVE_SECONDS = 5.0


def http_client(base_url: str, **options) -> httpx.Client:
    return httpx.Client(
        base_url=base_url, timeout=30, limits=httpx.Limits(keepalive_expiry=CLIENT_KEEPALIVE_SECONDS), **options
    )


class Refused(Exception):
    """A request answered with a status the bench did not expect."""


def checked(response: httpx.Response, status: int) -> httpx.Response:
    if response.status_code != status:
        raise Refused(f"{response.request.method} {response.request.url}: {response.status_code} {response.text[:300]}")
    return response


@dataclass
class Phase:
    """What threads sending requests measured: the wall time they took, each request's latency, the answers."""

    elapsed: float
    latencies: list[float]
    responses: list

    @property
    def rate(self) -> float:
        """Requests a second, over the wall time."""
        return len(self.latencies) / self.elapsed

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000

    @staticmethod
    def merge(phases: list[Phase]) -> Phase:
        """Phases run one after another, as one."""
        return Phase(
            sum(p.elapsed for p in phases),
            [t for p in phases for t in p.latencies],
            [r for p in phases for r in p.responses],
        )


def hammer(requests_per_thread: list[list]) -> Phase:
    """Run each thread's requests (callables returning an httpx.Response) in a thread of their own.

    A request that fails ends the bench with the failures listed: a thread that died
    quietly would leave its requests out of the rate.
    """
    latencies: list[float] = []
    responses: list = []
    failures: list[str] = []
    lock = threading.Lock()

    def worker(requests):
        mine, answers = [], []
        try:
            for send in requests:
                started = time.perf_counter()
                answers.append(send())
                mine.append(time.perf_counter() - started)
        except Exception as failure:  # noqa: BLE001  (listed below, then the bench stops)
            with lock:
                failures.append(repr(failure))
        with lock:
            latencies.extend(mine)
            responses.extend(answers)

    threads = [threading.Thread(target=worker, args=(requests,)) for requests in requests_per_thread]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} of {len(threads)} client threads failed: {failures}")
    return Phase(elapsed, latencies, responses)
