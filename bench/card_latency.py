"""Card latency: from the gate's 202 to the card on a reviewer's open inbox socket.

Run by hand from the repository root (PostgreSQL and Redis; the database is created
and migrated if needed):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench3 REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/card_latency.py

The script starts a real daphne (`daphne condor.asgi:application`, its own process)
on the same database and Redis, connects one reviewer to /ws/inbox/ over a real
websocket (session cookie, allowed Origin), then, one at a time, has an agent POST
a high-tier prescription to `runs/{id}/tool-calls/` over a kept-alive HTTP
connection and waits for that approval's `card.added` on the socket. Each suspend
uses its own executing run, prepared beforehand (not timed).

Timed per suspend, on one clock in this process:
  - 202 → card: from the moment the 202 answer is fully read to the card's arrival.
    The push is sent after commit but before the answer, so the card can win the
    race: a negative figure means the reviewer saw it before the agent did.
  - request → card: from sending the POST to the card's arrival (the whole path).
  - request → 202: the gate call itself, for scale.

Beside it, in the same run, the floor: a raw channels_redis `group_send` from this
process to a channel of the same Redis and back (`receive`), and the ratio.
`--sockets N` keeps N reviewers connected and times each card to the last of them.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import http.client
import json
import os
import platform
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")
from bench.scratch_db import ensure_database, setup_django  # noqa: E402

# This bench's pushes stay apart from anything else on the same Redis.
os.environ.setdefault("CONDOR_CHANNEL_PREFIX", f"condor-bench-{os.getpid()}")

ARGS = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}
TARGET_P50_MS, TARGET_P99_MS = 25.0, 100.0


def actors(tag: str) -> tuple[object, str, str]:
    """(API client, its raw key, a logged-in reviewer's session id) for this run."""
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from agents.models import ApiClient, ApiClientKey

    client = ApiClient.objects.create(name=f"bench-cards-{tag}")
    _, key = ApiClientKey.objects.create_key(name="bench", client=client)
    reviewer = User.objects.create_user(username=f"bench-inbox-{tag}")
    reviewer.groups.add(Group.objects.get(name="reviewers"))
    browser = Client()
    browser.force_login(reviewer)
    return client, key, browser.cookies["sessionid"].value


def executing_runs(client, count: int) -> list[str]:
    """`count` runs, each in its own session, moved to executing through the spine (not timed)."""
    from runs import spine
    from sessions_app.models import Session

    runs = []
    for i in range(count):
        session = Session.objects.create(client=client, title=f"Card latency {i}", age_band="adult")
        run = spine.open_run(session)
        spine.transition(run.pk, "executing")
        runs.append(str(run.pk))
    return runs


def close_runs(run_ids: list[str]) -> None:
    """Leave no pending cards behind for the next run's snapshot."""
    from runs import spine

    for run_id in run_ids:
        spine.close(run_id, "user_stopped")


# --------------------------------------------------------------------------- the inbox socket


class Inbox:
    """One reviewer's /ws/inbox/ over a minimal RFC 6455 client on asyncio streams.

    Hand-rolled because the websocket clients at hand are tied to twisted here
    (Django setup imports daphne, which pins txaio to twisted); the server side is
    the real daphne/autobahn stack either way.
    """

    def __init__(self):
        self.snapshot: list | None = None
        self.arrived: dict[str, float] = {}  # approval id → perf_counter() at arrival
        self.waiters: dict[str, asyncio.Event] = {}

    async def connect(self, port: int, session_id: str) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        self.writer.write(
            (
                f"GET /ws/inbox/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: http://127.0.0.1:{port}\r\nCookie: sessionid={session_id}\r\n\r\n"
            ).encode()
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError(f"the inbox refused the socket: {head!r}")
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        if accept not in head:
            raise RuntimeError("bad Sec-WebSocket-Accept")
        self.listener = asyncio.create_task(self._listen())
        while self.snapshot is None:
            await asyncio.sleep(0.005)

    async def _frame(self) -> tuple[bool, int, bytes]:
        first, second = await self.reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(await self.reader.readexactly(2), "big")
        elif length == 127:
            length = int.from_bytes(await self.reader.readexactly(8), "big")
        # Server frames are unmasked. (fin, opcode, payload)
        return bool(first & 0x80), first & 0x0F, await self.reader.readexactly(length)

    def _send(self, opcode: int, payload: bytes = b"") -> None:
        mask = os.urandom(4)  # client frames must be masked
        self.writer.write(
            bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        )

    async def _listen(self) -> None:
        message = b""
        while True:
            fin, opcode, payload = await self._frame()
            if opcode == 0x9:
                self._send(0xA, payload)  # pong
                continue
            if opcode == 0x8:
                return
            message += payload  # a text frame, or the continuation of one
            if fin:
                self._received(json.loads(message))
                message = b""

    def _received(self, message: dict) -> None:
        now = time.perf_counter()
        if message["type"] == "snapshot":
            self.snapshot = message["cards"]
        elif message["type"] == "card.added":
            approval_id = message["card"]["id"]
            self.arrived.setdefault(approval_id, now)
            self.waiter(approval_id).set()

    def waiter(self, approval_id: str) -> asyncio.Event:
        return self.waiters.setdefault(approval_id, asyncio.Event())

    def close(self) -> None:
        self._send(0x8, (1000).to_bytes(2, "big"))
        self.listener.cancel()
        self.writer.close()


# --------------------------------------------------------------------------- the agent


class Agent:
    """POSTs gate calls over one kept-alive HTTP connection, like an agent runtime's client."""

    def __init__(self, port: int, key: str):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Authorization": f"Api-Key {key}", "Content-Type": "application/json"}

    def park(self, run_id: str) -> tuple[str, float, float]:
        """Gate one prescription; (approval id, perf_counter() at send, at the full 202)."""
        body = json.dumps(
            {
                "tool_call_id": "call-1",
                "step_id": "step-1",
                "tool": "prescribe_medication",
                "op": "create",
                "args": ARGS,
            }
        )
        sent = time.perf_counter()
        self.connection.request("POST", f"/api/v1/runs/{run_id}/tool-calls/", body, self.headers)
        response = self.connection.getresponse()
        payload = response.read()
        answered = time.perf_counter()
        if response.status != 202:
            raise RuntimeError(f"expected 202, got {response.status}: {payload[:300]!r}")
        return json.loads(payload)["approval"]["id"], sent, answered


async def measure_cards(inboxes: list[Inbox], agent: Agent, run_ids: list[str], warmup: int) -> dict:
    """Per suspend, the card's arrival on the LAST of the open sockets (every reviewer has it)."""
    loop = asyncio.get_running_loop()
    after_answer, after_request, answer = [], [], []
    for index, run_id in enumerate(run_ids):
        approval_id, sent, answered = await loop.run_in_executor(None, agent.park, run_id)
        for inbox in inboxes:
            await asyncio.wait_for(inbox.waiter(approval_id).wait(), 10)
        if index >= warmup:
            arrived = max(inbox.arrived[approval_id] for inbox in inboxes)
            after_answer.append((arrived - answered) * 1e3)
            after_request.append((arrived - sent) * 1e3)
            answer.append((answered - sent) * 1e3)
    return {"202 → card": after_answer, "request → card": after_request, "request → 202": answer}


async def measure_raw(count: int, warmup: int) -> list[float]:
    """channels_redis group_send → receive on one channel, same Redis, this process."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("bench.latency", channel)
    samples = []
    try:
        for index in range(count + warmup):
            started = time.perf_counter()
            await layer.group_send("bench.latency", {"type": "bench.ping", "index": index})
            await layer.receive(channel)
            if index >= warmup:
                samples.append((time.perf_counter() - started) * 1e3)
    finally:
        await layer.group_discard("bench.latency", channel)
    return samples


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def summary(samples: list[float]) -> str:
    return (
        f"p50 {statistics.median(samples):7.2f} ms   p99 {percentile(samples, 99):7.2f} ms   "
        f"min {min(samples):7.2f}   max {max(samples):7.2f}"
    )


async def bench(
    port: int, key: str, session_id: str, run_ids: list[str], warmup: int, sockets: int
) -> tuple[dict, list]:
    inboxes = [Inbox() for _ in range(sockets)]
    for inbox in inboxes:
        await inbox.connect(port, session_id)
    try:
        cards = await measure_cards(inboxes, Agent(port, key), run_ids, warmup)
    finally:
        for inbox in inboxes:
            inbox.close()
    raw = await measure_raw(len(run_ids) - warmup, warmup)
    return cards, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suspends", type=int, default=500, help="timed suspends")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--sockets", type=int, default=1, help="open reviewer sockets; timed to the last")
    parser.add_argument("--smoke", action="store_true", help="3 suspends after 1: checks the bench still runs")
    options = parser.parse_args()
    if options.smoke:
        options.suspends, options.warmup = 3, 1

    database_url, redis_url = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not database_url.startswith(("postgres://", "postgresql://")) or not redis_url:
        sys.exit(
            "set DATABASE_URL (PostgreSQL) and REDIS_URL, e.g. "
            "DATABASE_URL=postgres://postgres@127.0.0.1:5432/condor_bench3 REDIS_URL=redis://127.0.0.1:6379/0"
        )
    ensure_database(database_url)
    setup_django()
    from django.conf import settings

    from tests.live.server import DaphneServer

    client, key, session_id = actors(uuid.uuid4().hex[:8])
    run_ids = executing_runs(client, options.suspends + options.warmup)
    env = {
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SECRET_KEY": settings.SECRET_KEY,
        "CONDOR_CHANNEL_PREFIX": os.environ["CONDOR_CHANNEL_PREFIX"],
        "LOG_LEVEL": "INFO",
    }
    try:
        with DaphneServer(env) as server:
            cards, raw = asyncio.run(bench(server.port, key, session_id, run_ids, options.warmup, options.sockets))
    finally:
        close_runs(run_ids)

    print(
        f"card latency over {options.suspends} suspends (after {options.warmup} warm-up), "
        f"daphne + Redis channel layer, {options.sockets} reviewer socket(s), timed to the last"
    )
    print(f"  Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    for name, samples in cards.items():
        print(f"  {name:<16}{summary(samples)}")
    print(f"  {'raw group_send':<16}{summary(raw)}   (group_send → receive, same Redis)")
    p50, p99 = statistics.median(cards["202 → card"]), percentile(cards["202 → card"], 99)
    end_to_end = statistics.median(cards["request → card"])
    print(f"  ratio request → card / raw round trip (p50): {end_to_end / statistics.median(raw):.1f}×")
    met = p50 <= TARGET_P50_MS and p99 <= TARGET_P99_MS
    print(f"  target 202 → card p50 ≤ {TARGET_P50_MS:g} ms, p99 ≤ {TARGET_P99_MS:g} ms: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
