"""The audit chains' heads anchored outside the database: HMAC-signed lines in an append-only file.

A chain proves its rows against one another, not against someone who rewrites (or deletes)
its newest rows and moves the head to match: the database owner, or a superuser, who can
switch the triggers off (`ALTER TABLE … DISABLE TRIGGER`, `SET session_replication_role =
replica`). A checkpoint records where every chain's head stood (chain, the head row's id,
seq, hash) and is signed with CONDOR_AUDIT_KEY, a key the database never sees, so neither
can be rewritten to agree with the other. `verify_audit --checkpoints FILE` then reports a
head that stands behind a checkpoint, and a checkpointed row that is gone or no longer holds
its hash.

A line holds the heads of the chains that gained rows since the line before it (every
chain on the file's first line): one line per interval stays small however many sessions
the log holds, and each chain's latest head is in some line once the next checkpoint after
its last append is taken. "Since" reaches back OVERLAP before the previous line: a row's
`at` is taken before its transaction commits, possibly on another host's clock.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from operator import or_
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from audit.models import AuditChainHead, AuditEvent

FORMAT = 1
KEY_MIN_CHARS = 32
OVERLAP = timedelta(minutes=15)
BATCH = 500  # (chain, seq) pairs per lookup: an OR of that many index probes


class CheckpointRefused(Exception):
    """A checkpoint cannot be written or checked as configured (no key, a short key, no file)."""


def signing_key() -> bytes:
    key = settings.CONDOR_AUDIT_KEY
    if not key:
        raise CheckpointRefused(
            "CONDOR_AUDIT_KEY is not set: audit checkpoints are signed with a key kept outside "
            "the database; set it (at least 32 random characters) where checkpoints are "
            "written and verified."
        )
    if len(key) < KEY_MIN_CHARS:
        raise CheckpointRefused(
            f"CONDOR_AUDIT_KEY is too short ({len(key)} characters): use at least {KEY_MIN_CHARS} random characters."
        )
    return key.encode()


def _signature(line: dict, key: bytes) -> str:
    unsigned = {name: value for name, value in line.items() if name != "hmac"}
    text = json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def _signed(line: dict, key: bytes) -> bool:
    return isinstance(line.get("hmac"), str) and hmac.compare_digest(line["hmac"], _signature(line, key))


# --- writing ---------------------------------------------------------------------------------


def write(path: str | os.PathLike) -> dict:
    """Append one signed checkpoint line to `path` (created if missing, never truncated) and return it."""
    key = signing_key()
    previous = _last_line(Path(path))
    since = None
    if previous is not None and _signed(previous, key):
        since = datetime.fromisoformat(previous["at"]) - OVERLAP
    line = {
        "v": FORMAT,
        "at": timezone.now().isoformat(),
        "since": since and since.isoformat(),
        "heads": [
            {"chain": chain, "row_id": row_id, "rows": seq, "hash": digest}
            for chain, seq, digest, row_id in _heads(since)
        ],
    }
    line["hmac"] = _signature(line, key)
    _append(Path(path), json.dumps(line, separators=(",", ":")) + "\n")
    return line


def _heads(since: datetime | None) -> list[tuple[str, int, str, int | None]]:
    """(chain, seq, hash, head row id) of every chain with rows (with a row written since `since`)."""
    heads = AuditChainHead.objects.filter(seq__gt=0).order_by("chain")
    if since is not None:
        heads = heads.filter(chain__in=AuditEvent.objects.filter(at__gte=since).values("chain"))
    found = list(heads.values_list("chain", "seq", "hash"))
    rows = rows_at((chain, seq) for chain, seq, _ in found)
    return [(chain, seq, digest, rows.get((chain, seq), (None,))[0]) for chain, seq, digest in found]


def rows_at(positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, str]]:
    """{(chain, seq): (row id, hash)} of the rows standing at `positions` (absent ones left out)."""
    positions = list(positions)
    found = {}
    for start in range(0, len(positions), BATCH):
        where = reduce(or_, (Q(chain=chain, seq=seq) for chain, seq in positions[start : start + BATCH]))
        for chain, seq, row_id, digest in AuditEvent.objects.filter(where).values_list("chain", "seq", "id", "hash"):
            found[chain, seq] = (row_id, digest)
    return found


def _append(path: Path, text: str) -> None:
    # O_APPEND: one write lands whole at the end, whatever else has the file open.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _last_line(path: Path) -> dict | None:
    """The file's last line as JSON (None: no file, an empty one, or a last line that is not JSON)."""
    try:
        with path.open("rb") as file:
            end = file.seek(0, os.SEEK_END)
            tail, at = b"", end
            while at > 0 and tail.count(b"\n") < 2:
                at = max(0, at - 65536)
                file.seek(at)
                tail = file.read(end - at)
    except FileNotFoundError:
        return None
    lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
    try:
        line = json.loads(lines[-1])
    except ValueError:
        return None
    return line if isinstance(line, dict) else None


# --- checking --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One thing a checkpoint file shows wrong: with the file itself (no row), or with a chain's row."""

    line: int
    problem: str
    chain: str = ""
    seq: int | None = None
    row_id: int | None = None

    def __str__(self) -> str:
        if not self.chain:
            return f"checkpoint line {self.line}: {self.problem}"
        return f"row id={self.row_id} chain={self.chain} seq={self.seq}: {self.problem} (checkpoint line {self.line})"


@dataclass(frozen=True)
class _Checkpointed:
    line: int
    row_id: int | None
    hash: str


def check(path: str | os.PathLike) -> tuple[int, list[Finding]]:
    """(lines read, findings) for the checkpoint file at `path` against the log as it stands."""
    key = signing_key()
    findings: list[Finding] = []
    seen: dict[tuple[str, int], _Checkpointed] = {}
    lines = 0
    for number, line in _lines(Path(path)):
        lines = number
        if line is None or not _signed(line, key):
            findings.append(
                Finding(number, "the signature does not match: the line was altered, or signed with another key")
            )
            continue
        for head in line["heads"]:
            position, mark = (head["chain"], head["rows"]), _Checkpointed(number, head["row_id"], head["hash"])
            earlier = seen.setdefault(position, mark)
            if (earlier.row_id, earlier.hash) != (mark.row_id, mark.hash):
                findings.append(
                    Finding(
                        number,
                        f"checkpoints disagree: line {earlier.line} saw another row here; "
                        "the row was rewritten between them",
                        *position,
                        mark.row_id,
                    )
                )
    return lines, findings + _against_the_log(seen)


def _lines(path: Path) -> Iterator[tuple[int, dict | None]]:
    try:
        file = path.open("rb")
    except FileNotFoundError:
        raise CheckpointRefused(f"No checkpoint file at {path}.") from None
    with file:
        for number, raw in enumerate(file, start=1):
            try:
                line = json.loads(raw)
            except ValueError:
                line = None
            yield number, line if isinstance(line, dict) and isinstance(line.get("heads"), list) else None


def _against_the_log(seen: dict[tuple[str, int], _Checkpointed]) -> list[Finding]:
    findings = []
    standing = rows_at(seen)
    heads = {}
    chains = sorted({chain for chain, _ in seen})
    for start in range(0, len(chains), BATCH):
        heads.update(AuditChainHead.objects.filter(chain__in=chains[start : start + BATCH]).values_list("chain", "seq"))
    latest: dict[str, tuple[int, _Checkpointed]] = {}
    for (chain, seq), mark in sorted(seen.items()):
        latest[chain] = (seq, mark)
        row = standing.get((chain, seq))
        if row is None:
            findings.append(Finding(mark.line, "the checkpointed row is gone (deleted)", chain, seq, mark.row_id))
        elif row != (mark.row_id, mark.hash):
            findings.append(
                Finding(
                    mark.line, "the row no longer matches its checkpointed hash (rewritten)", chain, seq, mark.row_id
                )
            )
    for chain, (seq, mark) in latest.items():
        head = heads.get(chain)
        if head is None or head < seq:
            at = "gone" if head is None else f"at seq {head}"
            findings.append(
                Finding(
                    mark.line,
                    f"the chain's head moved backwards: it is {at}, the checkpoint saw seq {seq}",
                    chain,
                    seq,
                    mark.row_id,
                )
            )
    return findings


def checkpoint_details(path, lines: int, findings: list[Finding]) -> dict:
    """What a verification audit row keeps of a checkpoint check."""
    details = {"file": str(path), "lines": lines, "findings": len(findings)}
    if findings:
        details["first_finding"] = str(findings[0])
    return details
