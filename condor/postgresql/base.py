"""Django's PostgreSQL backend, each connection it takes from its pool tested first (condor/pool_check.py).

Django gives its pool psycopg_pool's own check (CONN_HEALTH_CHECKS, a round trip before
every request) or none, and takes no other: `check=` is its own argument, not one of
OPTIONS["pool"]. So the pool is built without one and this backend tests the connection
Django takes from it.

A connection the server has ended means it has most likely ended the others too (a
restart, pg_terminate_backend on the database). Left to the pool, a request would meet
them one after another, and psycopg_pool pauses between failed checks as it does between
failed connection attempts (one second, then two, four, eight): a pool of a dozen dead
connections costs several requests their whole timeout. So the first dead one found has
the pool test all its idle connections at once (`ConnectionPool.check`), and the request
takes one of those that passed or a fresh one.
"""

from django.db.backends.postgresql import base

from condor.pool_check import fit_to_hand_out


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        pool = self.pool
        if pool is None or fit_to_hand_out(connection):
            return connection
        pool.putconn(connection)  # closed by the failed check: the pool opens another in its place
        pool.check()
        return super().get_new_connection(conn_params)
