"""The audit log's hash chains: one per session, plus one for everything without a session.

Why per session and not one chain for the whole log: appending a link means
reading the previous link's hash and writing the new one under a lock, so a
single chain would put every gate call of every agent in one queue. Every audit
row of a session is written while its run (or session) row is already locked,
so the session's chain head lock adds no waiting of its own; it is taken last
(lock order: session → run → approvals → chain head). Rows without a session
(registry changes, logins, admin exports, verifications) share GLOBAL_CHAIN;
they are rare next to gate traffic. Cost per append: one locked SELECT of the
head row, one UPDATE of it and one hash (~30 µs) on top of the row's INSERT
(bench/admin.py measures it on a gate call; figures in bench/README.md).

A row's hash is SHA-256 over the RFC 8785 canonical JSON of its content (every
column but `id` and `hash`) including `prev_hash`, the previous row's hash in the
same chain (GENESIS_HASH for `seq` 1). An edited row no longer matches its hash;
a deleted row leaves a gap in `seq` (or, for the newest row, a head that points
past the last row); rows moved out of order break the `seq` order of ids,
which inside one chain grow with `seq` because appends are serialised by the
head lock. What a chain cannot show by itself is a rewrite of everything from
the edited row on, heads included: anchor the digest `verify_audit` prints
outside the database to catch that too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from approvals.hashing import canonical_json_fast, is_plain_json
from approvals.models.audit import GENESIS_HASH, GLOBAL_CHAIN, AuditChainHead, AuditEvent
from condor.bulk import insert_all
from condor.sql import Write, insert_sql, kept, run_together

# The columns a row's hash covers, in the order verify_audit reads them.
HASHED_FIELDS = ("chain", "seq", "prev_hash", "at", "kind", "actor", "actor_user_id", "actor_client_id",
                 "session_id", "run_id", "approval_id", "patient_ref", "tool", "op", "decision",
                 "rule_id", "data")


def chain_for(session_id) -> str:
    return f"session:{session_id}" if session_id is not None else GLOBAL_CHAIN


def _text(value) -> str | None:
    return value if value is None or type(value) is str else str(value)


def _iso(at) -> str:
    # Microseconds in UTC, as the database keeps them (verify's SQL hands it over formatted).
    return at if type(at) is str else at.astimezone(UTC).isoformat(timespec="microseconds")


def content_hash(values: tuple) -> str:
    """The hash of one row, from its HASHED_FIELDS values (as `values_list` returns them)."""
    (chain, seq, prev_hash, at, kind, actor, actor_user_id, actor_client_id, session_id, run_id,
     approval_id, patient_ref, tool, op, decision, rule_id, data) = values
    content = {
        "v": 1, "chain": chain, "seq": seq, "prev_hash": prev_hash,
        "at": _iso(at),
        "kind": kind, "actor": actor, "actor_user_id": actor_user_id, "actor_client_id": _text(actor_client_id),
        "session_id": _text(session_id), "run_id": _text(run_id), "approval_id": _text(approval_id),
        "patient_ref": patient_ref, "tool": tool, "op": op, "decision": decision, "rule_id": rule_id,
        "data": data,
    }
    # The envelope is plain by construction (fixed ASCII keys, strings, safe integers):
    # only `data` needs looking at.
    plain = is_plain_json(data) and type(seq) is int and -2**53 < seq < 2**53
    return hashlib.sha256(canonical_json_fast(content, plain=plain)).hexdigest()


def event_hash(event: AuditEvent) -> str:
    return content_hash(tuple(getattr(event, field) for field in HASHED_FIELDS))


def _head_lock_sql(db) -> str:
    # The ORM's own SELECT … FOR UPDATE (none on SQLite, whose transactions hold the whole
    # database), compiled once per connection: the head's lock is in every audited request.
    query = AuditChainHead.objects.select_for_update().filter(chain="").values_list("seq", "hash").query
    sql, _ = query.get_compiler(connection=db).as_sql()
    return sql


def lock_head(chain: str) -> tuple[int, str]:
    """(seq, hash) of the chain's head row, locked until the caller's transaction ends (created on first use)."""
    sql = kept("audit-head-lock", _head_lock_sql, model=AuditChainHead)
    with connection.cursor() as cursor:
        cursor.execute(sql, [chain])
        head = cursor.fetchone()
        if head is None:
            # Two first appends may race here: the insert is a no-op for the loser,
            # which then queues on the winner's lock below.
            AuditChainHead.objects.bulk_create([AuditChainHead(chain=chain)], ignore_conflicts=True)
            cursor.execute(sql, [chain])
            head = cursor.fetchone()
    return head


class _HeldHeads:
    """Heads a transaction has locked and moved, as it left them: a later append in the
    same transaction links to them without locking and reading the head again.

    Registered as a (no-op) on-commit callback, so Django itself says whether it is
    still current: a commit or rollback empties the list, and rolling back a savepoint
    drops what was registered inside it, exactly when the heads' move is undone too.
    Checked at the index it was registered at (O(1), however many rows a transaction
    appends); a list that has shifted only costs a fresh lock. One callback holds every
    head one append moved: a sweep batch moves a thousand.
    """

    __slots__ = ("heads", "index")

    def __init__(self, heads: dict[str, tuple[int, str]]):
        self.heads, self.index = heads, -1

    def __call__(self) -> None:
        pass


def _registry(db) -> dict[str, _HeldHeads]:
    """This transaction's held heads by chain. Django starts a new on-commit list at every commit
    and rollback (of a savepoint too): the registry kept for an older list is dropped with it,
    so it never outgrows a transaction (a sweep pass appends to a hundred thousand chains)."""
    hooks = db.run_on_commit
    registry = getattr(db, "_audit_held_heads", None)
    if registry is None or registry[0] is not hooks:
        registry = db._audit_held_heads = (hooks, {})
    return registry[1]


def _current(held: _HeldHeads | None, hooks: list) -> _HeldHeads | None:
    if held is not None and 0 <= held.index < len(hooks) and hooks[held.index][1] is held:
        return held
    return None


def _held_head(chain: str) -> tuple[int, str] | None:
    """(seq, hash) of `chain`'s head as this transaction left it, if it holds the lock already."""
    db = connections[DEFAULT_DB_ALIAS]
    held = _current(_registry(db).get(chain), db.run_on_commit)
    return held.heads[chain] if held is not None else None


def _hold(moved: dict[str, tuple[int, str]]) -> None:
    """Remember the heads an append moved (chain: (seq, hash)) for the rest of the transaction."""
    db = connections[DEFAULT_DB_ALIAS]
    registry, hooks, savepoints = _registry(db), db.run_on_commit, set(db.savepoint_ids)
    fresh = {}
    for chain, head in moved.items():
        held = _current(registry.get(chain), hooks)
        if held is not None and hooks[held.index][0] == savepoints:
            # Same savepoint as its registration: a rollback that undoes this move drops it too.
            held.heads[chain] = head
        else:
            fresh[chain] = head
    if not fresh:
        return
    held = _HeldHeads(fresh)
    transaction.on_commit(held)
    if db.in_atomic_block:
        held.index = len(db.run_on_commit) - 1
        _registry(db).update(dict.fromkeys(fresh, held))


def append(event: AuditEvent, *, along: Sequence[Write] = ()) -> AuditEvent:
    """Link `event` to its chain and insert it. Needs the caller's transaction.

    Two round trips on PostgreSQL: the head's lock, then the row's INSERT and the
    head's move in one statement (data-modifying CTEs, condor.sql.run_together), so
    a gate call pays one statement less per row; a second row in the same
    transaction and chain skips the lock (it is held already, see _HeldHead).
    `along`: the caller's own writes, folded into that same statement (the gate's
    outbox event). SQLite runs them one after another (its transactions hold the
    whole database, so nothing waits).
    """
    held = _held_head(event.chain)
    if held is None:
        held = lock_head(event.chain)
    event.seq, event.prev_hash = held[0] + 1, held[1]
    event.hash = event_hash(event)
    insert, params = insert_sql(event)

    def inserted(ids: list) -> None:
        event.pk = ids[0]
        event._state.adding, event._state.db = False, connection.alias

    move = f"UPDATE {AuditChainHead._meta.db_table} SET seq = %s, hash = %s WHERE chain = %s"
    run_together([Write(insert, params, done=inserted), Write(move, [event.seq, event.hash, event.chain]), *along])
    _hold({event.chain: (event.seq, event.hash)})
    return event


def _lock_heads(chains: set[str]) -> dict[str, list]:
    """[seq, hash] of each of `chains`' heads, locked in name order (created on first use),
    as `lock_head` does for one; values, not model instances: a sweep batch locks a thousand."""
    locked = AuditChainHead.objects.select_for_update().order_by("chain")
    heads = {chain: [seq, digest] for chain, seq, digest in
             locked.filter(chain__any=list(chains)).values_list("chain", "seq", "hash")}
    missing = chains - heads.keys()
    if missing:
        AuditChainHead.objects.bulk_create([AuditChainHead(chain=chain) for chain in missing], ignore_conflicts=True)
        heads.update((chain, [seq, digest]) for chain, seq, digest in
                     locked.filter(chain__any=list(missing)).values_list("chain", "seq", "hash"))
    return heads


def _advance(heads: list[tuple[int, str, str]]) -> None:
    """Move each head (seq, hash, chain) on by one link, in one statement.

    On PostgreSQL an UPDATE joined to the new values as arrays (a thousand chains of a
    sweep batch at the cost of one statement); elsewhere (SQLite) one UPDATE per head,
    sent as a batch. Never bulk_update: its CASE over a thousand chains cost more Python
    than the whole rest of a sweep batch (bench/sweep.py).
    """
    table = connection.ops.quote_name(AuditChainHead._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            seqs, hashes, chains = (list(column) for column in zip(*heads, strict=True))
            cursor.execute(f"UPDATE {table} AS head SET seq = moved.seq, hash = moved.hash "
                           "FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS moved (seq, hash, chain) "
                           "WHERE head.chain = moved.chain", [seqs, hashes, chains])
        else:
            cursor.executemany(f"UPDATE {table} SET seq = %s, hash = %s WHERE chain = %s", heads)


def append_many(events: list[AuditEvent]) -> list[AuditEvent]:
    """Link `events` to their chains (in list order within each chain) and insert them at once.

    Needs the caller's transaction. A constant number of statements however many chains:
    one locked SELECT of the heads, one INSERT, and one UPDATE of the heads per round,
    where round r advances every chain that gains at least r rows (the database lets a
    head move on by one seq per UPDATE, migration 0006). Ids grow with seq inside each
    chain because the rows go in in list order, as `verify` expects.
    """
    if not events:
        return events
    heads = _lock_heads({event.chain for event in events})
    rounds: list[list[tuple[int, str, str]]] = []
    gained: dict[str, int] = {}
    for event in events:
        head = heads[event.chain]
        event.seq, event.prev_hash = head[0] + 1, head[1]
        event.hash = head[1] = event_hash(event)
        head[0] = event.seq
        step = gained[event.chain] = gained.get(event.chain, 0) + 1
        if step > len(rounds):
            rounds.append([])
        rounds[step - 1].append((event.seq, event.hash, event.chain))
    insert_all(events)
    for moved in rounds:
        _advance(moved)
    # A later `append` in this transaction links to the heads as moved here.
    _hold({chain: tuple(heads[chain]) for chain in gained})
    return events


# --- verification ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Break:
    """The first row (in id order) where a chain does not hold, and what is wrong with it."""

    id: int | None
    chain: str
    seq: int | None
    problem: str

    def __str__(self) -> str:
        where = f"row id={self.id}" if self.id is not None else "chain head"
        return f"{where} chain={self.chain} seq={self.seq}: {self.problem}"


@dataclass(frozen=True)
class Report:
    rows: int
    chains: int
    broken: Break | None
    digest: str  # SHA-256 over every verified chain's (name, last seq, last hash): anchor it elsewhere

    @property
    def intact(self) -> bool:
        return self.broken is None


BATCH = 5000


# PostgreSQL hands ids and times over as the text the hash takes, with no Python objects
# built per column: verify_audit's fast path (a million rows in well under a minute).
_PG_PAGE = """
SELECT id, hash, chain, seq, prev_hash, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'),
       kind, actor, actor_user_id, actor_client_id::text, session_id::text, run_id::text, approval_id::text,
       patient_ref, tool, op, decision, rule_id, data::text
FROM approvals_auditevent WHERE id > %s {chains} ORDER BY id LIMIT %s
"""


def _pg_rows(chains: list[str] | None, batch: int):
    sql = _PG_PAGE.format(chains="AND chain = ANY(%s)" if chains is not None else "")
    last = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(sql, [last, chains, batch] if chains is not None else [last, batch])
            page = cursor.fetchall()
            for row in page:
                yield (*row[:-1], json.loads(row[-1]))
            if len(page) < batch:
                return
            last = page[-1][0]


def _rows(chains: Iterable[str] | None, batch: int):
    """Every row (of `chains`, or all), in id order, by keyset pages: flat memory, no held cursor."""
    if connection.vendor == "postgresql":
        yield from _pg_rows(None if chains is None else list(chains), batch)
        return
    queryset = AuditEvent.objects.order_by("id")
    if chains is not None:
        queryset = queryset.filter(chain__in=list(chains))
    columns = ("id", "hash", *HASHED_FIELDS)
    last = 0
    while True:
        page = list(queryset.filter(id__gt=last).values_list(*columns)[:batch])
        yield from page
        if len(page) < batch:
            return
        last = page[-1][0]


def _out_of_place(chain: str, row_id: int, seq: int, expected: int) -> str:
    later = AuditEvent.objects.filter(chain=chain, seq=expected).values_list("id", flat=True).first()
    if later is not None:
        return (f"wrong order: seq {seq} is stored before seq {expected} (row id={later}); "
                f"rows were reordered")
    missing = f"seq {expected}" if seq == expected + 1 else f"seq {expected}..{seq - 1}"
    return f"missing predecessor: {missing} absent (gap in sequence; a row was deleted)"


def verify(chains: Iterable[str] | None = None, *, batch: int = BATCH) -> Report:
    """Walk every chain (or only `chains`) and return the first break, if any.

    One snapshot for the whole walk (REPEATABLE READ on PostgreSQL): rows and heads
    committed meanwhile by concurrent appends are neither half-seen nor mistaken
    for deletions.
    """
    chains = None if chains is None else sorted(set(chains))
    own_snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
    with transaction.atomic():
        if own_snapshot:  # (inside a caller's transaction, its snapshot rules)
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _walk(chains, batch)


def _walk(chains: list[str] | None, batch: int) -> Report:
    tips: dict[str, tuple[int, str]] = {}  # chain -> (last seq, last hash) seen so far
    rows = 0
    for row in _rows(chains, batch):
        row_id, stored, values = row[0], row[1], row[2:]
        chain, seq, prev_hash = values[0], values[1], values[2]
        rows += 1
        if content_hash(values) != stored:
            return _report(rows, tips, Break(row_id, chain, seq, "content hash mismatch: the row was edited"))
        last_seq, last_hash = tips.get(chain, (0, GENESIS_HASH))
        if seq != last_seq + 1:
            if seq <= last_seq:
                problem = f"wrong order: seq {seq} is stored after seq {last_seq}; rows were reordered"
            else:
                problem = _out_of_place(chain, row_id, seq, last_seq + 1)
            return _report(rows, tips, Break(row_id, chain, seq, problem))
        if prev_hash != last_hash:
            return _report(rows, tips, Break(row_id, chain, seq,
                                             "previous hash mismatch: the row before it was replaced"))
        tips[chain] = (seq, stored)
    return _report(rows, tips, _check_heads(tips, chains))


def _check_heads(tips: dict[str, tuple[int, str]], chains: list[str] | None) -> Break | None:
    """The heads must point at the last rows walked: a deleted newest row leaves its head behind."""
    heads = AuditChainHead.objects.order_by("chain")
    if chains is not None:
        heads = heads.filter(chain__in=chains)
    seen = set()
    for chain, seq, head_hash in heads.values_list("chain", "seq", "hash").iterator(chunk_size=BATCH):
        seen.add(chain)
        last_seq, last_hash = tips.get(chain, (0, GENESIS_HASH))
        if seq > last_seq:
            return Break(None, chain, seq, f"missing rows: the head is at seq {seq} but the last row is "
                                           f"seq {last_seq} (the newest rows were deleted)")
        if (seq, head_hash) != (last_seq, last_hash):
            return Break(None, chain, seq, f"head mismatch: the head does not match the last row (seq {last_seq})")
    headless = set(tips) - seen
    if headless:
        chain = min(headless)
        return Break(None, chain, tips[chain][0], "missing head: the chain has rows but no head")
    return None


def _report(rows: int, tips: dict[str, tuple[int, str]], broken: Break | None) -> Report:
    digest = hashlib.sha256()
    for chain in sorted(tips):
        seq, last_hash = tips[chain]
        digest.update(f"{chain} {seq} {last_hash}\n".encode())
    return Report(rows=rows, chains=len(tips), broken=broken, digest=digest.hexdigest())


def report_details(report: Report) -> dict:
    """What a verification audit row keeps of its report."""
    details = {"rows": report.rows, "chains": report.chains, "digest": report.digest}
    if report.broken is not None:
        broken = report.broken
        details["first_broken"] = {"id": broken.id, "chain": broken.chain, "seq": broken.seq,
                                   "problem": broken.problem}
    return details
