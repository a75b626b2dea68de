"""The audit log's hash chains: one per session, plus one for everything without a session.

Why per session and not one chain for the whole log: appending a link means
reading the previous link's hash and writing the new one under a lock, so a
single chain would put every gate call of every agent in one queue. Every audit
row of a session is written while its run (or session) row is already locked,
so the session's chain head lock adds no waiting of its own; it is taken last
(lock order: session → run → approvals → chain head). The gate takes it with its
run, in one statement (`locked_head_join`): after it the gate waits for no row
but its own run's, which nobody else touches without that run's lock, and takes
another run's grant only if nobody holds it (approvals/gate.py). Rows without a session
(registry changes, logins, admin exports, verifications) share GLOBAL_CHAIN;
they are rare next to gate traffic. An append locks the head (SELECT … FOR UPDATE),
hashes the new links in Python, and sends the rows' INSERT and the head's move with
the caller's own writes (`append_linked`).

A row's hash (version 2) is SHA-256 over "prev_hash:seq:body",
where `body` is SHA-256 over the RFC 8785 canonical JSON of the rest of its
content (every column but `id`, `hash`, `seq` and `prev_hash`) and `prev_hash`
is the previous row's hash in the same chain (GENESIS_HASH for `seq` 1). Older rows carry version 1, one digest over content and link together;
verification accepts either (each is a deterministic digest of the same content,
so accepting both lets nothing through that either one would not). An edited
row no longer matches its hash; a deleted row leaves a gap in `seq` (or, for the
newest row, a head that points past the last row); rows moved out of order break
the `seq` order of ids, which inside one chain grow with `seq` because appends
are serialised by the head lock (a row's id is drawn once its head is locked).
What a chain cannot show by itself is a rewrite of everything from the edited
row on, heads included: audit/checkpoints.py anchors the heads outside
the database to catch that too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC

import rfc8785
from django.db import connection, transaction

from audit.models import GENESIS_HASH, GLOBAL_CHAIN, AuditChainHead, AuditEvent
from core.hashing import canonical_json_fast, is_plain_json
from core.rows import Write, column, first_row, insert_rows_sql, kept, run_together, table, update_sql

# The columns a row's hash covers, in the order verify_audit reads them.
HASHED_FIELDS = (
    "chain",
    "seq",
    "prev_hash",
    "at",
    "kind",
    "actor",
    "actor_user_id",
    "actor_client_id",
    "session_id",
    "run_id",
    "approval_id",
    "patient_ref",
    "tool",
    "op",
    "decision",
    "rule_id",
    "data",
)


SESSION_CHAIN_PREFIX = "session:"


def chain_for(session_id) -> str:
    return f"{SESSION_CHAIN_PREFIX}{session_id}" if session_id is not None else GLOBAL_CHAIN


def session_chain_sql(session_id_sql: str) -> str:
    """`chain_for` in SQL, for a statement that has a session's id (a uuid column) but not its value."""
    return f"('{SESSION_CHAIN_PREFIX}' || CAST({session_id_sql} AS text))"


def _text(value) -> str | None:
    return value if value is None or type(value) is str else str(value)


def _iso(at) -> str:
    # Microseconds in UTC, as the database keeps them (verify's SQL hands it over formatted).
    return at if type(at) is str else at.astimezone(UTC).isoformat(timespec="microseconds")


def _content(values: tuple, version: int) -> bytes:
    """A row's canonical JSON: version 1 with its link (`seq`, `prev_hash`), version 2 without."""
    (
        chain,
        seq,
        prev_hash,
        at,
        kind,
        actor,
        actor_user_id,
        actor_client_id,
        session_id,
        run_id,
        approval_id,
        patient_ref,
        tool,
        op,
        decision,
        rule_id,
        data,
    ) = values
    content = {
        "v": version,
        "chain": chain,
        "at": _iso(at),
        "kind": kind,
        "actor": actor,
        "actor_user_id": actor_user_id,
        "actor_client_id": _text(actor_client_id),
        "session_id": _text(session_id),
        "run_id": _text(run_id),
        "approval_id": _text(approval_id),
        "patient_ref": patient_ref,
        "tool": tool,
        "op": op,
        "decision": decision,
        "rule_id": rule_id,
        "data": data,
    }
    if version == 1:
        content["seq"], content["prev_hash"] = seq, prev_hash
    # The envelope is plain by construction (fixed ASCII keys, strings, safe integers):
    # only `data` needs looking at.
    plain = is_plain_json(data) and type(seq) is int and -(2**53) < seq < 2**53
    return canonical_json_fast(content, plain=plain)


def body_hash(values: tuple) -> str:
    """The hash of a row's content but its link (`seq`, `prev_hash`), from its HASHED_FIELDS values."""
    return hashlib.sha256(_content(values, 2)).hexdigest()


def link_hash(prev_hash: str, seq: int, body: str) -> str:
    """A row's hash from its link and its body's hash."""
    return hashlib.sha256(f"{prev_hash}:{seq}:{body}".encode()).hexdigest()


def row_hash(values: tuple) -> str:
    """The hash of one row (version 2), from its HASHED_FIELDS values (as `values_list` returns them)."""
    return link_hash(values[2], values[1], body_hash(values))


def v1_hash(values: tuple) -> str:
    """The hash rows written before version 2 carry: one digest over the content and the link together."""
    return hashlib.sha256(_content(values, 1)).hexdigest()


def hash_holds(values: tuple, stored: str) -> bool:
    """Whether `stored` is the row's hash in either version (one chain may hold both, older rows first)."""
    return stored == row_hash(values) or stored == v1_hash(values)


def event_hash(event: AuditEvent) -> str:
    return row_hash(tuple(getattr(event, field) for field in HASHED_FIELDS))


def lock_head(chain: str) -> list:
    """[seq, hash] of the chain's head row, locked until the caller's transaction ends (created on first use).

    SQLite takes no row lock (select_for_update is a no-op there): its write transaction
    holds the whole database, which serialises appends just the same. A statement of its own,
    not `_lock_heads` of one: a request's text stays the one PostgreSQL keeps prepared. Written
    out (`_head_sql`): every audited request asks it, and the ORM compiles it anew each time.
    """
    sql, params = kept("lock-head", _head_sql, model=AuditChainHead), [chain]
    head = first_row(sql, params)
    if head is None:
        _create_heads([chain])
        head = first_row(sql, params)
    return list(head)


@dataclass
class LockedHead:
    """A chain's head as the caller's transaction locked it (`locked_head_join`, `locked_head`).

    `link` is [seq, hash], moved on in place as `append_linked` links rows to it: the
    caller hands the same object to each of its appends to that chain.
    """

    chain: str
    link: list


HEAD_COLUMNS = ("chain", "seq", "hash")


def locked_head_join(db, chain_sql: str, alias: str = "head") -> tuple[str, str]:
    """(columns, join) that lock and read the head of the chain `chain_sql` names, in a caller's
    statement on PostgreSQL: `alias`'s HEAD_COLUMNS, all NULL while the chain has no head.

    For a caller that locks its own rows first and takes nothing after the head it could
    wait for (approvals/gate.py); `locked_head` makes the values the `head` its appends
    take. The chain's name must come from a row the statement locked before (a LATERAL
    reference), so the head is locked after it. FOR UPDATE in READ COMMITTED reads the
    row's newest version, however long the statement waited.
    """
    heads = table(AuditChainHead, db=db)

    def col(name, qualifier=heads):
        return column(AuditChainHead, name, qualifier, db=db)

    return (
        ", ".join(col(name, alias) for name in HEAD_COLUMNS),
        f"LEFT OUTER JOIN LATERAL (SELECT {', '.join(col(name) for name in HEAD_COLUMNS)} FROM {heads} "
        f"WHERE {col('chain')} = {chain_sql} FOR UPDATE) AS {alias} ON TRUE",
    )


def locked_head(values) -> LockedHead | None:
    """The head `locked_head_join`'s columns read (their values, in order); None if there was none,
    or if the statement read no head (`values` empty: SQLite's, which takes no row locks)."""
    if not values:
        return None
    chain, seq, digest = values
    return LockedHead(chain, [seq, digest]) if chain is not None else None


def _head_sql(db) -> str:
    """`select_for_update().filter(chain=…).values_list("seq", "hash")`, as one text."""

    heads = table(AuditChainHead, db=db)

    def col(name):
        return column(AuditChainHead, name, heads, db=db)

    lock = " FOR UPDATE" if db.vendor == "postgresql" else ""
    return f"SELECT {col('seq')}, {col('hash')} FROM {heads} WHERE {col('chain')} = %s{lock}"


def _create_heads(chains) -> None:
    # Two first appends may race here: the insert is a no-op for the loser, which then
    # queues on the winner's head row.
    AuditChainHead.objects.bulk_create([AuditChainHead(chain=chain) for chain in chains], ignore_conflicts=True)


def _link(event: AuditEvent, head: list) -> None:
    """Make `event` the chain's next row after `head` ([seq, hash]), and move `head` on to it."""
    event.seq, event.prev_hash = head[0] + 1, head[1]
    event.hash = event_hash(event)
    head[0], head[1] = event.seq, event.hash


def append(event: AuditEvent, *, along: Sequence[Write] = (), head: LockedHead | None = None) -> AuditEvent:
    """Link `event` to its chain and insert it. Needs the caller's transaction (`append_linked`)."""
    return append_linked([event], along=along, head=head)[0]


def append_linked(
    events: Sequence[AuditEvent], *, along: Sequence[Write] = (), head: LockedHead | None = None
) -> list[AuditEvent]:
    """Link one or two `events` of one chain to it, in order, and insert them. Needs the caller's transaction.

    The one way a request appends, on every database: the head is locked and read
    (`lock_head`), the links are hashed here, then the rows' INSERT, the head's move and
    `along` (the caller's own writes: the gate's ledger row, the outbox event) go as one
    statement on PostgreSQL (`run_together`). The rows go in as one INSERT, in list order,
    so a second row's id is the larger, as `verify` expects of a chain; and every id is
    drawn under the head's lock, so ids grow with `seq` across transactions too.

    `head`: the events' chain head, if this transaction locked it already (`LockedHead`).
    """
    if not 1 <= len(events) <= 2 or len({event.chain for event in events}) != 1:
        raise ValueError("append_linked links one or two rows of one chain")
    chain = events[0].chain
    if head is None:
        head = lock_head(chain)
    elif head.chain == chain:
        head = head.link
    else:
        raise ValueError(f"append_linked was handed the head of {head.chain}, not of {chain}")
    replaced = head[1]
    for event in events:
        _link(event, head)

    def inserted(ids: list) -> None:
        for event, pk in zip(events, sorted(ids), strict=True):
            event.pk = pk
            event._state.adding, event._state.db = False, connection.alias

    # The head keeps the hash it replaced (migration 0018 checks the move against the rows).
    move = update_sql(AuditChainHead, chain, seq=head[0], prev_hash=replaced, hash=head[1])
    run_together([Write(*insert_rows_sql(list(events)), done=inserted), Write(*move), *along])
    return list(events)


def _lock_heads(chains: set[str]) -> dict[str, list]:
    """[seq, hash] of each of `chains`' heads, locked in name order (created on first use),
    as `lock_head` does for one; values, not model instances: a sweep batch locks a thousand."""
    locked = AuditChainHead.objects.select_for_update().order_by("chain")
    heads = {
        chain: [seq, digest]
        for chain, seq, digest in locked.filter(chain__any=list(chains)).values_list("chain", "seq", "hash")
    }
    missing = chains - heads.keys()
    if missing:
        _create_heads(missing)
        heads.update(
            (chain, [seq, digest])
            for chain, seq, digest in locked.filter(chain__any=list(missing)).values_list("chain", "seq", "hash")
        )
    return heads


def _advance(heads: list[tuple[int, str, str]]) -> None:
    """Move each head (seq, hash, chain) on by one link, in one statement.

    On PostgreSQL an UPDATE joined to the new values as arrays (a thousand chains of a
    sweep batch at the cost of one statement); elsewhere (SQLite) one UPDATE per head,
    sent as a batch. Never bulk_update: its CASE over a thousand chains costs more
    than the whole rest of a sweep batch.
    """
    quote, meta = connection.ops.quote_name, AuditChainHead._meta
    table = quote(meta.db_table)
    seq, prev_hash, digest, chain = (
        quote(meta.get_field(name).column) for name in ("seq", "prev_hash", "hash", "chain")
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            seqs, hashes, chains = (list(column) for column in zip(*heads, strict=True))
            cursor.execute(
                f"UPDATE {table} AS head SET {seq} = moved.seq, {prev_hash} = head.{digest}, "
                f"{digest} = moved.hash FROM unnest(%s::bigint[], %s::text[], %s::text[]) "
                f"AS moved (seq, hash, chain) WHERE head.{chain} = moved.chain",
                [seqs, hashes, chains],
            )
        else:
            cursor.executemany(
                f"UPDATE {table} SET {seq} = %s, {prev_hash} = {digest}, {digest} = %s WHERE {chain} = %s", heads
            )


def append_many(events: list[AuditEvent]) -> list[AuditEvent]:
    """Link `events` to their chains (in list order within each chain) and insert them at once.

    Needs the caller's transaction. A constant number of statements however many chains:
    one locked SELECT of the heads, one INSERT, and one UPDATE of the heads per round,
    where round r advances every chain that gains at least r rows by one (the database lets
    a head move on by one or two an UPDATE, migrations 0006 and 0017). Ids grow with seq inside each
    chain because the rows go in in list order, as `verify` expects.
    """
    if not events:
        return events
    heads = _lock_heads({event.chain for event in events})
    rounds: list[list[tuple[int, str, str]]] = []
    gained: dict[str, int] = {}
    for event in events:
        _link(event, heads[event.chain])
        step = gained[event.chain] = gained.get(event.chain, 0) + 1
        if step > len(rounds):
            rounds.append([])
        rounds[step - 1].append((event.seq, event.hash, event.chain))
    AuditEvent.objects.bulk_create(events)
    for moved in rounds:
        _advance(moved)
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
SELECT {id}, {hash}, {chain}, {seq}, {prev_hash},
       to_char({at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'),
       {kind}, {actor}, {actor_user}, {actor_client}::text, {session_id}::text, {run_id}::text, {approval_id}::text,
       {patient_ref}, {tool}, {op}, {decision}, {rule_id}, {data}::text
FROM {table} WHERE {id} > %s {chains} ORDER BY {id} LIMIT %s
"""
_PG_PAGE_COLUMNS = (
    "id",
    "hash",
    "chain",
    "seq",
    "prev_hash",
    "at",
    "kind",
    "actor",
    "actor_user",
    "actor_client",
    "session_id",
    "run_id",
    "approval_id",
    "patient_ref",
    "tool",
    "op",
    "decision",
    "rule_id",
    "data",
)


def _pg_rows(chains: list[str] | None, batch: int):
    names = {name: column(AuditEvent, name) for name in _PG_PAGE_COLUMNS}
    sql = _PG_PAGE.format(
        table=table(AuditEvent), **names, chains=f"AND {names['chain']} = ANY(%s)" if chains is not None else ""
    )
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
        return f"wrong order: seq {seq} is stored before seq {expected} (row id={later}); rows were reordered"
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
        try:
            holds = hash_holds(values, stored)
        except rfc8785.CanonicalizationError as error:
            # A value no canonical JSON writes (an integer past ±(2^53−1) put into the row by hand):
            # this row cannot be verified, which is a break to report, not a walk to end in a crash.
            return _report(rows, tips, Break(row_id, chain, seq, f"content cannot be verified: {error}"))
        if not holds:
            return _report(rows, tips, Break(row_id, chain, seq, "content hash mismatch: the row was edited"))
        last_seq, last_hash = tips.get(chain, (0, GENESIS_HASH))
        if seq != last_seq + 1:
            if seq <= last_seq:
                problem = f"wrong order: seq {seq} is stored after seq {last_seq}; rows were reordered"
            else:
                problem = _out_of_place(chain, row_id, seq, last_seq + 1)
            return _report(rows, tips, Break(row_id, chain, seq, problem))
        if prev_hash != last_hash:
            return _report(
                rows, tips, Break(row_id, chain, seq, "previous hash mismatch: the row before it was replaced")
            )
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
            return Break(
                None,
                chain,
                seq,
                f"missing rows: the head is at seq {seq} but the last row is "
                f"seq {last_seq} (the newest rows were deleted)",
            )
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
        details["first_broken"] = {"id": broken.id, "chain": broken.chain, "seq": broken.seq, "problem": broken.problem}
    return details
