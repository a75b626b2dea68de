"""Inserting many model instances at once: COPY on PostgreSQL, bulk_create elsewhere.

A sweep batch writes a thousand outbox events, audit rows and telemetry rows per
transaction. bulk_create spent most of that batch's Python time preparing every
field of every row and dumping the values into arrays (bench/README.md, the sweep
section); COPY takes the rows as they are. SQLite (`make run`) keeps bulk_create.
"""

import json
import operator
import time
from functools import cache

from django.db import connection
from django.db.backends.utils import CursorDebugWrapper
from django.db.models import AutoField, BigAutoField, JSONField, SmallAutoField

_AUTO = (AutoField, BigAutoField, SmallAutoField)


def _json(field):
    attname, encoder = field.attname, field.encoder

    def value(obj):
        # As JSONField saves it: None is SQL NULL, anything else its JSON text.
        data = getattr(obj, attname)
        return None if data is None else json.dumps(data, cls=encoder)
    return value


def _stamped(field):
    return lambda obj: field.pre_save(obj, True)  # auto_now / auto_now_add, as a save would set them


@cache
def _columns(model, with_pk: bool) -> tuple[list[str], list]:
    """The model's columns as COPY lists them, and a function per column reading its value off an instance."""
    names, readers = [], []
    for field in model._meta.concrete_fields:
        if isinstance(field, _AUTO) and not with_pk:
            continue
        names.append(connection.ops.quote_name(field.column))
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            readers.append(_stamped(field))
        elif isinstance(field, JSONField):
            readers.append(_json(field))
        else:
            readers.append(operator.attrgetter(field.attname))
    return names, readers


@cache
def _fields(model) -> list:
    return [(field.attname, field) for field in model._meta.concrete_fields]


def instance(model, /, **values):  # positional-only: a model may have a field named `model` (RunDispatch)
    """`model(**values)`, with `values` named by attname (`run_id`, not `run`), built by position.

    Django's keyword path checks every field against the keywords and costs twice
    as much, which a sweep batch pays for three rows a run. Fields not named take
    their defaults; a name that is no field is refused, as the keyword path refuses it.
    """
    row = [values.pop(name) if name in values else field.get_default() for name, field in _fields(model)]
    if values:
        raise TypeError(f"{model.__name__} has no field (by attname) {', '.join(sorted(values))}")
    return model(*row)


def _draw_ids(cursor, model, count: int) -> list[int]:
    # The sequence's name is looked up once a statement (MATERIALIZED): per row it cost
    # PostgreSQL a third of the draw.
    cursor.execute("WITH sequence AS MATERIALIZED (SELECT pg_get_serial_sequence(%s, %s)::regclass AS name) "
                   "SELECT nextval(sequence.name) FROM sequence, generate_series(1, %s)",
                   [model._meta.db_table, model._meta.pk.column, count])
    # Sorted: the rows go in with ids in list order, as consecutive INSERTs would give them.
    return sorted(row[0] for row in cursor.fetchall())


def insert_all(objs: list, *, ids: bool = False) -> list:
    """Insert `objs` (unsaved instances of one model) at once, in list order; returns them.

    With `ids`, each instance learns its primary key (on PostgreSQL drawn from the
    sequence first, one statement, then written with the row). Without, PostgreSQL
    leaves the ids to the column default and the instances do not learn them.
    Model `save()` logic and signals do not run, as with bulk_create.
    """
    if not objs:
        return objs
    model = type(objs[0])
    if connection.vendor != "postgresql":
        return model.objects.bulk_create(objs)
    with connection.cursor() as cursor:
        with_pk = ids and isinstance(model._meta.pk, _AUTO)
        if with_pk:
            for obj, pk in zip(objs, _draw_ids(cursor, model, len(objs)), strict=True):
                obj.pk = pk
        names, readers = _columns(model, with_pk)
        sql = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({', '.join(names)}) FROM STDIN"
        began = time.monotonic()
        with cursor.cursor.copy(sql) as copy:
            for obj in objs:
                copy.write_row([read(obj) for read in readers])
        if isinstance(cursor, CursorDebugWrapper):
            # A COPY bypasses Django's cursor wrapper: logged by hand, so query counts
            # (CaptureQueriesContext, the pinned statement counts) still see it.
            connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - began:.3f}"})
    for obj in objs:
        obj._state.adding, obj._state.db = False, connection.alias
    return objs
