"""Django's PostgreSQL backend, its connection pool checking connections as condor/pool_check.py does.

Django hands CONN_HEALTH_CHECKS to its pool as psycopg_pool's own check (an empty query
before every request) and offers no setting for another: the pool is built inside
`DatabaseWrapper.pool`, which passes `check=` itself. So this backend lets Django build
the pool and then puts Condor's check in its place (`tests/test_pool_check.py` fails if
psycopg_pool stops keeping the callback where this puts it).
"""

from django.db.backends.postgresql import base

from condor.pool_check import check_connection


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self):
        built_here = self.alias not in self._connection_pools
        pool = super().pool
        if built_here and pool is not None and self.settings_dict["CONN_HEALTH_CHECKS"]:
            pool._check = check_connection
        return pool
