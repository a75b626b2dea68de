"""The tool registry as the gate reads it: held in memory per process, checked against a stamp.

Every gate call needs the descriptor of its tool; the registry changes a few
times a day. The registry's write path (registry/descriptors.py `register`, which
registry_changes goes through) drops this process's copy when its transaction
commits. Other processes notice through the stamp, which the gate reads in the
statement that re-reads the session under the run lock (`stamp_sql`; a decision
reads it with the approval it locks, a resume with the approval it consumes): so a
registry change committed before the gate's lock is never missed, exactly as
when the gate read the descriptor row itself, and it costs no round trip.

On PostgreSQL the stamp is a digest of every row's `xmin`: any insert, update
or delete changes it, whatever wrote it. Not max(updated_at): a change committed
after a later-stamped one would not move it. SQLite has no `xmin`; there the
stamp lists every row's id and updated_at, which every ORM save moves (a raw
UPDATE in another process that leaves updated_at alone goes unseen until this
process writes the registry itself; SQLite serves the one-process `make run`).
"""

import threading

from django.db import connection

from core.rows import column, table
from registry.models import ToolDescriptor

# One scalar for an annotation; the table holds a few dozen rows, so the scan is microseconds.
_STAMP_SQL = {
    "postgresql": "SELECT md5(COALESCE(string_agg(xmin::text, ',' ORDER BY {id}), '')) FROM {table}",
    "sqlite": "SELECT COALESCE(group_concat({id} || ':' || {updated_at}, ','), '') "
    "FROM (SELECT {id}, {updated_at} FROM {table} ORDER BY {id})",
}


def stamp_sql() -> str:
    return _STAMP_SQL[connection.vendor].format(
        table=table(ToolDescriptor), id=column(ToolDescriptor, "id"), updated_at=column(ToolDescriptor, "updated_at")
    )


_lock = threading.Lock()
_cached: tuple[str, dict] | None = None  # (stamp, {name: ToolSpec})


def specs(stamp: str) -> dict:
    """Every registered tool's ToolSpec by name, as of `stamp` (read with stamp_sql())."""
    global _cached
    cached = _cached
    if cached is not None and cached[0] == stamp:
        return cached[1]
    loaded = {descriptor.name: descriptor.to_spec() for descriptor in ToolDescriptor.objects.all()}
    with _lock:
        _cached = (stamp, loaded)
    return loaded


def invalidate() -> None:
    global _cached
    with _lock:
        _cached = None
