"""Whether a pooled connection may be handed out, without a round trip when none is needed.

psycopg_pool's own check is an empty query: one round trip to PostgreSQL before every
request. Most of what that query finds out can be learnt without one: when PostgreSQL
ends a connection (a restart, a crash of another backend, pg_terminate_backend) the
backend sends its FATAL error and closes the socket, so a dead idle connection has
something to read. A live idle one has nothing: Condor LISTENs on none of them, and the
server says nothing unasked between statements. So the socket is looked at without
waiting, and the empty query runs only when there is something to read, or when the
connection has not been handed out for IDLE_PING_SECONDS: a peer gone without a word (a
network cut) leaves nothing to read, and a ping then still finds it before a request
does. Go's pgx pool works the same way (a read with no wait, a ping after a second idle).
"""

from __future__ import annotations

import select
from time import monotonic
from weakref import WeakKeyDictionary

from psycopg import Error
from psycopg_pool import ConnectionPool

IDLE_PING_SECONDS = 1.0

# Each connection is with one thread at a time, so two threads never write one key.
_handed_out_at: WeakKeyDictionary = WeakKeyDictionary()


def fit_to_hand_out(conn) -> bool:
    """False if the server has ended `conn` (the ping that found it out leaves it closed)."""
    now = monotonic()
    last = _handed_out_at.get(conn)
    if last is None or now - last > IDLE_PING_SECONDS or _has_something_to_read(conn):
        try:
            ConnectionPool.check_connection(conn)
        except Error:
            return False
    _handed_out_at[conn] = now
    return True


def _has_something_to_read(conn) -> bool:
    if conn.closed:
        return True  # the empty query then fails, as for any other dead connection
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return bool(poller.poll(0))
