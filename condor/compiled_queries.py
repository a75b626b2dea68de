"""Reads whose SQL the ORM compiles once per process, run as raw statements afterwards.

Building a queryset and compiling it costs ~0.7 ms of Python a statement, and going through
the ORM's result iteration a few tenths more: for the history of a long session (two reads of
hundreds of rows, sessions_app/history.py) that was a fifth of the request's CPU. The statement
is the ORM's own, compiled for this database with a stand-in value for the one parameter that
changes (the session); only that parameter is swapped in per call, adapted as the ORM adapts it
(condor.sql.db_value: SQLite keeps UUIDs as hex).

Only for reads whose columns need no converter from the ORM (text, casts to text, plain
numbers): the rows come back as the database driver returns them.
"""

import uuid
from collections.abc import Callable

from django.db import connection

from condor.sql import db_value

_STAND_IN = uuid.UUID("00000000-0000-4000-8000-00000000c0de")
_compiled: dict = {}


def rows(queryset_for: Callable, model, field_name: str, value) -> list[tuple]:
    """The rows of `queryset_for(value)`, a values_list queryset filtered on `model.field_name`, a UUID
    (`queryset_for` is the cache key: a module-level function, not a lambda made per call)."""
    key = (queryset_for, connection.vendor)
    statement = _compiled.get(key)
    if statement is None:
        sql, params = queryset_for(_STAND_IN).query.sql_with_params()
        stand_in = db_value(model, field_name, _STAND_IN)
        (slot,) = [index for index, param in enumerate(params) if param == stand_in]
        statement = _compiled[key] = (sql, list(params), slot)
    sql, params, slot = statement
    params = params.copy()
    params[slot] = db_value(model, field_name, value)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
