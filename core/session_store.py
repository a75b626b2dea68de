"""Django's database session store, its session read written out once.

Every request of a signed-in reviewer loads their session first. The ORM compiles that
lookup afresh each time, at more CPU than the statement costs the database; here the
same SELECT is a text kept per connection (core/rows.py). Only a found session is read
this way: a missing, expired or malformed one goes through Django's own `load`, which
also forgets the key as it always has.
"""

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.utils import timezone

from core.rows import column, db_value, first_row, kept, table


class SessionStore(DatabaseSessionStore):
    def load(self):
        key, model = self.session_key, self.get_model_class()
        if key:
            now = db_value(model, "expire_date", timezone.now())
            row = first_row(kept(("session-load", model), lambda db: _load_sql(model, db), model=model), [key, now])
            if row is not None:
                return self.decode(row[0])
        return super().load()


def _load_sql(model, db) -> str:
    """`model.objects.get(session_key=…, expire_date__gt=…)`'s data, as one text."""

    def col(name):
        return column(model, name, db=db)

    return (
        f"SELECT {col('session_data')} FROM {table(model, db=db)} "
        f"WHERE {col('session_key')} = %s AND {col('expire_date')} > %s"
    )
