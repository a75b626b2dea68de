"""Django's database session store, its one read per request kept as a statement text (condor/sql.py)."""

from django.contrib.sessions.backends import db
from django.utils import timezone

from condor.sql import columns, db_value, first_row, kept, reader


class SessionStore(db.SessionStore):
    """Every request of a signed-in person reads its session row: the ORM compiled that SELECT anew each
    time (with the user's own read, most of a decision's authentication). The same statement, compiled
    once per connection; what a missing or expired row means is Django's (`_session_key` dropped)."""

    def _get_session_from_db(self):
        model = self.model
        sql = kept("session-load", lambda db: _load_sql(model, db), model=model)
        row = first_row(sql, [self.session_key, db_value(model, "expire_date", timezone.now())])
        if row is None:
            self._session_key = None
            return None
        return reader(model)(row)


def _load_sql(model, db) -> str:
    quote = db.ops.quote_name
    return (f"SELECT {columns(model, db=db)} FROM {quote(model._meta.db_table)} "
            f"WHERE {quote('session_key')} = %s AND {quote('expire_date')} > %s")
