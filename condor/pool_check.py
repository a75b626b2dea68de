"""The pool's test of a connection before it hands it out, without a round trip when none is needed (issue 11).

Django's CONN_HEALTH_CHECKS gives a pool psycopg_pool's own check, an empty query: one
round trip to PostgreSQL before every request, 2-7% of a HITL cycle over HTTP
(bench/README.md, "Session 15" and "Session 16"). Most of what that query finds out can be learnt without one: when
PostgreSQL ends a connection (a restart, a crash of another backend,
pg_terminate_backend) the backend sends its FATAL error and closes the socket, so a dead
idle connection has something to read. A live idle one has nothing: Condor LISTENs on
none of them, and the server says nothing unasked between statements. So the check looks
at the socket without waiting, and runs the empty query only when there is something to
read, or when the connection has not been handed out for IDLE_PING_SECONDS: a peer gone
without a word (a network cut) leaves nothing to read, and a ping then still finds it
before a request does. Go's pgx pool works the same way (a read with no wait, a ping
after a second idle).
"""

from __future__ import annotations

import select
from time import monotonic

from psycopg_pool import ConnectionPool

IDLE_PING_SECONDS = 1.0
_HANDED_OUT_AT = "_condor_handed_out_at"


def check_connection(conn) -> None:
    """psycopg_pool's `check` callback: return quietly if `conn` may be handed out, raise otherwise."""
    now = monotonic()
    last = getattr(conn, _HANDED_OUT_AT, None)
    if last is None or now - last > IDLE_PING_SECONDS or _has_something_to_read(conn):
        ConnectionPool.check_connection(conn)  # raises on a dead connection, and the pool takes another
    setattr(conn, _HANDED_OUT_AT, now)


def _has_something_to_read(conn) -> bool:
    if conn.closed:
        return True  # the empty query then raises, as the pool expects of a dead connection
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return bool(poller.poll(0))
