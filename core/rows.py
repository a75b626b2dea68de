"""Plain INSERT / UPDATE / SELECT statements built from `Model._meta`, for the writes the ORM cannot batch.

The hot paths send a conditional INSERT, an UPDATE … RETURNING or several writes
folded into one statement (`run_together`): the ORM has no way to say those. Each
statement here is written out in full from the model's `db_table` and each field's
`column`; values go in as the field adapts them for a save (`get_db_prep_save`), rows
come back through `Model.from_db`. Nothing here reads what Django compiles.
"""

import datetime
import re
import weakref
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import AutoField, BigAutoField, SmallAutoField
from django.utils import timezone

_AUTO = (AutoField, BigAutoField, SmallAutoField)


# Statement texts and row readers by connection, then key. Kept here, not on Django's connection
# objects, which are not ours to add attributes to; an entry goes with its connection.
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def kept(key, build: Callable, *, model=None, db=None):
    """`build(db)` for `key`, kept for the connection `db` (default: this thread's default connection).

    A statement text is the same every request; keeping it per connection keeps
    SQLite's and PostgreSQL's apart (their quoting differs), and a reader's conversions
    bound to the connection that reads with them. `model`: the text is built from this
    model's columns; a change to them (the app registry rebuilds `concrete_fields`)
    builds it again.
    """
    # The thread's own wrapper, also for `django.db.connection` (a proxy to it, and no key).
    db = connections[DEFAULT_DB_ALIAS if db is None else db.alias]
    store = _KEPT.get(db)
    if store is None:
        store = _KEPT[db] = {}
    entry = store.get(key)
    if model is None:
        if entry is None:
            entry = store[key] = build(db)
        return entry
    meta = model._meta
    if entry is None or entry[0] is not meta.concrete_fields or entry[1] != meta.db_table:
        entry = store[key] = (meta.concrete_fields, meta.db_table, build(db))
    return entry[2]


def _default_db():
    # The thread's own wrapper: `django.db.connection` is a proxy that looks it up again on
    # every attribute, and a row's values ask it for its ops and features once a field.
    return connections[DEFAULT_DB_ALIAS]


def _quote(db, name: str) -> str:
    return db.ops.quote_name(name)


def column(model, name: str, qualifier: str = "", *, db=None) -> str:
    """The quoted column of `model`'s field `name` (a field name or attname), after `qualifier.` if given
    (a table or an alias, as the statement writes it)."""
    db = connection if db is None else db
    quoted = db.ops.quote_name(model._meta.get_field(name).column)
    return f"{qualifier}.{quoted}" if qualifier else quoted


def table(model, *, db=None) -> str:
    """`model`'s table, quoted."""
    return (connection if db is None else db).ops.quote_name(model._meta.db_table)


def insert_fields(model) -> list:
    """The fields an INSERT of `model` writes: every concrete one but an auto-incremented pk."""
    return [field for field in model._meta.concrete_fields if not (field.primary_key and isinstance(field, _AUTO))]


def _prepared(field, value, db):
    # A value goes in as a parameter: an expression (F(), a DatabaseDefault) would need SQL of its own.
    if hasattr(value, "resolve_expression"):
        raise ValueError(f"{field} holds an expression: write such a row with the ORM")
    return field.get_db_prep_save(value, connection=db)


def _saved(field, obj, db):
    return _prepared(field, field.pre_save(obj, True), db)  # auto_now / auto_now_add, as a save sets them


def _insert_head(model, db) -> str:
    names = ", ".join(_quote(db, field.column) for field in insert_fields(model))
    return f"INSERT INTO {table(model, db=db)} ({names})"


def _returning_pk(model, db) -> str:
    return f" RETURNING {_quote(db, model._meta.pk.column)}"


def insert_sql(obj, *, returning: bool = True) -> tuple[str, list]:
    """`INSERT INTO table (...) VALUES (...)` for `obj` (every concrete column but an auto pk), RETURNING its pk."""
    return insert_rows_sql([obj], returning=returning)


KEPT_ROWS_AT_MOST = 8


def insert_rows_sql(objs: list, *, returning: bool = True) -> tuple[str, list]:
    """One INSERT of several instances of one model, a VALUES row each, their pks RETURNING in list order."""
    db, model = _default_db(), type(objs[0])
    fields = insert_fields(model)
    row = f"({', '.join(['%s'] * len(fields))})"

    def build(db):
        return f"{_insert_head(model, db)} VALUES {', '.join([row] * len(objs))}" + (
            _returning_pk(model, db) if returning else ""
        )

    # A text is kept for each row count up to KEPT_ROWS_AT_MOST: a request inserts two or three
    # events at once, and a text of every length a batch ever had would live as long as the connection.
    sql = (
        kept(("insert", model, len(objs), returning), build, model=model, db=db)
        if len(objs) <= KEPT_ROWS_AT_MOST
        else build(db)
    )
    return sql, [_saved(field, obj, db) for obj in objs for field in fields]


def insert_if_sql(obj, condition: tuple[str, list]) -> tuple[str, list]:
    """`INSERT INTO table (...) SELECT ... WHERE condition RETURNING pk`: `obj` inserted only while `condition` holds.

    The check and the insert are one statement, so nothing the condition reads can
    change between them within this transaction's view (PostgreSQL and SQLite alike).
    """
    db, model = _default_db(), type(obj)
    fields = insert_fields(model)
    head = kept(
        ("insert-select", model),
        lambda db: f"{_insert_head(model, db)} SELECT {', '.join(['%s'] * len(fields))}",
        model=model,
        db=db,
    )
    sql = f"{head} WHERE {condition[0]}{_returning_pk(model, db)}"
    return sql, [*(_saved(field, obj, db) for field in fields), *condition[1]]


def update_sql(model, pk, **values) -> tuple[str, list]:
    """`UPDATE table SET ... WHERE pk = %s`, the values (by field name or attname) adapted as a save adapts them."""
    db = _default_db()
    fields = [model._meta.get_field(name) for name in values]

    def build(db):
        assignments = ", ".join(f"{_quote(db, field.column)} = %s" for field in fields)
        return f"UPDATE {table(model, db=db)} SET {assignments} WHERE {_quote(db, model._meta.pk.column)} = %s"

    sql = kept(("update", model, tuple(values)), build, model=model, db=db)
    params = [_prepared(field, value, db) for field, value in zip(fields, values.values(), strict=True)]
    return sql, [*params, model._meta.pk.get_db_prep_value(pk, db, prepared=False)]


def save_write(obj) -> "Write":
    """`obj.save()`'s UPDATE of every column, as a statement for the caller to send with its own
    (`run_together`), for a row its caller holds locked (so it is there to update)."""
    model = type(obj)
    values = {
        field.attname: field.pre_save(obj, False) for field in model._meta.concrete_fields if not field.primary_key
    }
    return Write(*update_sql(model, obj.pk, **values))


def columns(model, table: str | None = None, *, db=None) -> str:
    """`model`'s columns in field order, for a SELECT or RETURNING, each qualified by `table`
    (default: the model's table; "": unqualified, as SQLite's RETURNING wants them).

    Named rather than `*`: `*` follows the table's physical column order, which a
    migration that adds a column can make differ from the model's.
    """

    def build(db):
        name = model._meta.db_table if table is None else table
        qualifier = f"{_quote(db, name)}." if name else ""
        return ", ".join(f"{qualifier}{_quote(db, field.column)}" for field in model._meta.concrete_fields)

    return kept(("columns", model, table), build, model=model, db=db)


def reader(model, *, db=None) -> Callable[[tuple], object]:
    """A function building a `model` instance from the values of its `columns()` (in that order), as the ORM would.

    Each value is converted as the ORM converts that column (`_conversions`: JSON text
    decoded, SQLite's datetimes and UUIDs parsed), then goes to `model.from_db` (so a
    model's own `from_db` runs too).
    """

    def build(db):
        alias, names = db.alias, [field.attname for field in model._meta.concrete_fields]
        conversions = _conversions(model, db)
        return lambda row: model.from_db(alias, names, _converted(row, conversions))

    return kept(("reader", model), build, model=model, db=db)


# What SQLite hands back as text or a number where the ORM hands back a Python value, by the
# field's internal type: the SQLite backend converts these columns, and a field's documented
# `to_python` parses the same values the same way (a UUID from its 32 hex digits, a boolean from
# 0 or 1, a date or a time from its text). A foreign key's `to_python` is its target's (a UUID
# parsed, an integer kept). A datetime comes back naive, in the database's time zone
# (`_naive_datetimes_zone`). The backend's own converters are no documented API, so they are not
# called; the fields' are.
_SQLITE_TO_PYTHON = frozenset(
    {"DateTimeField", "DateField", "TimeField", "UUIDField", "BooleanField", "ForeignKey", "OneToOneField"}
)
# Converted by the SQLite backend in ways no documented API repeats (a decimal rounded to
# SQLite's 15 significant digits, a duration counted in microseconds): read such a model with the ORM.
_SQLITE_UNREAD = frozenset({"DecimalField", "DurationField"})


def _conversions(model, db) -> dict[int, Callable]:
    """One function a column that needs converting (by its index in `columns()`), from the value
    the database driver returns to the one the ORM sets on an instance, through documented APIs only.

    PostgreSQL: psycopg returns the Python values (UUID, aware datetime, bool) and only the
    field's `from_db_value` has work to do (a JSONField decodes its text: Django has psycopg
    hand jsonb over as text). SQLite: its values are parsed first (`_SQLITE_TO_PYTHON`), then
    `from_db_value`. Called with None for the expression: there is none (no annotation, no key
    transform), only the column.
    """
    conversions = {}
    for index, field in enumerate(model._meta.concrete_fields):
        convert = _conversion(field, db)
        if convert is not None:
            conversions[index] = convert
    return conversions


def value_reader(model, field_name: str, *, db=None) -> Callable:
    """A function converting one column of `model`'s field `field_name`, as a raw statement read it, to
    the value the ORM would set on an instance (`reader`'s conversion of that column alone)."""

    def build(db):
        return _conversion(model._meta.get_field(field_name), db) or (lambda value: value)

    return kept(("value-reader", model, field_name), build, model=model, db=db)


def _conversion(field, db) -> Callable | None:
    if db.vendor not in ("postgresql", "sqlite"):
        raise NotImplementedError(f"reader() converts PostgreSQL's and SQLite's values, not {db.vendor}'s")
    steps = []
    if db.vendor == "sqlite":
        kind = field.get_internal_type()
        if kind in _SQLITE_UNREAD:
            raise NotImplementedError(f"reader() cannot convert {field.model.__name__}.{field.name} ({kind}) on SQLite")
        if kind in _SQLITE_TO_PYTHON:
            steps.append(_parsed(field))
        if kind == "DateTimeField" and (zone := _naive_datetimes_zone(db)) is not None:
            steps.append(_aware(zone))
    if hasattr(field, "from_db_value"):
        steps.append(_from_db_value(field, db))
    return _chain(steps) if steps else None


def _naive_datetimes_zone(db):
    """The zone SQLite's naive datetimes are in, while USE_TZ: the database's TIME_ZONE setting, UTC if unset."""
    if not settings.USE_TZ:
        return None
    name = settings.DATABASES[db.alias].get("TIME_ZONE")
    return zoneinfo.ZoneInfo(name) if name else datetime.UTC


def _parsed(field):
    # NULL stays None, as the backend leaves it (a non-null BooleanField's `to_python` would refuse None).
    return lambda value: value if value is None else field.to_python(value)


def _aware(zone):
    def aware(value):
        return value if value is None or timezone.is_aware(value) else timezone.make_aware(value, zone)

    return aware


def _from_db_value(field, db):
    return lambda value: field.from_db_value(value, None, db)


def _chain(steps: list) -> Callable:
    if len(steps) == 1:
        return steps[0]

    def chained(value):
        for step in steps:
            value = step(value)
        return value

    return chained


def _converted(row: tuple, conversions: dict):
    if not conversions:
        return row
    row = list(row)
    for index, convert in conversions.items():
        row[index] = convert(row[index])
    return row


def first_row(sql: str, params: list) -> tuple | None:
    """The first row `sql` returns, or None."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def db_value(model, field_name: str, value):
    """`value` as `model.field_name`'s column holds it on this database, for a raw statement's parameters.

    SQLite keeps a UUID as 32 hex digits and a datetime as naive UTC text; a raw
    parameter must match that form, or its comparisons silently miss.
    """
    return model._meta.get_field(field_name).get_db_prep_value(value, _default_db(), prepared=False)


def choice_literal(value: str) -> str:
    """A fixed choice value (a status, a reason code) written into a statement's text as a quoted literal.

    PostgreSQL plans a prepared statement once for every execution (its generic plan) only
    while that plan is expected to cost no more than one made for the values at hand. A
    status compared with a parameter is estimated from the statistics in one plan and not in
    the other (nor can it match a partial index on that status), so such a statement would be
    planned anew on every execution. Only plain choice values (lowercase letters, digits,
    underscores) can be written in.
    """
    if not _CHOICE.fullmatch(value):
        raise ValueError(f"not a plain choice value: {value!r}")
    return f"'{value}'"


_CHOICE = re.compile(r"[a-z0-9_]+")


def deferred_instance(model, **values):
    """A `model` instance from some of its columns (by attname); the others load on first access.

    For rows a hot path has read as a few extra columns of another statement.
    """
    names = [field.attname for field in model._meta.concrete_fields if field.attname in values]
    return model.from_db(connection.alias, names, [values[name] for name in names])


@cache
def _attnames(model) -> list:
    return [(field.attname, field) for field in model._meta.concrete_fields]


def instance(model, /, **values):  # positional-only: a model may have a field named `model` (RunDispatch)
    """`model(**values)`, with `values` named by attname (`run_id`, not `run`), built by position.

    Django's keyword path checks every field against the keywords and costs twice
    as much, which a sweep batch pays for three rows a run. Fields not named take
    their defaults; a name that is no field is refused, as the keyword path refuses it.
    """
    row = [values.pop(name) if name in values else field.get_default() for name, field in _attnames(model)]
    if values:
        raise TypeError(f"{model.__name__} has no field (by attname) {', '.join(sorted(values))}")
    return model(*row)


@dataclass(frozen=True)
class Write:
    """One data-modifying statement to run together with others (`run_together`).

    `done`, if given, is called with the values of the statement's RETURNING once it
    has run: one value a row, or with `returns` (the RETURNING columns it reads) one
    tuple a row. It may raise to refuse the result, which rolls the caller's
    transaction back. `name`: the CTE's name, for a later write of the same
    statement to select this one's RETURNING from (PostgreSQL only).
    """

    sql: str
    params: list
    done: Callable[[list], None] | None = None
    name: str | None = None
    returns: tuple[str, ...] = ()


def run_together(writes: list[Write]) -> None:
    """Run `writes` in one round trip on PostgreSQL: each a data-modifying CTE of one statement.

    Elsewhere (SQLite has no data-modifying CTE; its transactions hold the whole
    database, so nothing waits) they run one after another, in list order.
    The CTEs all see the database as it was before the statement, and all of them
    run: no write may need another's rows except through a named write's RETURNING,
    and a write whose result is refused (its `done` raises) relies on the caller's
    transaction rolling the others back.
    The `done` callbacks are called in list order after everything has run.
    """
    returned: list[list] = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and (len(writes) > 1 or any(write.name for write in writes)):
            names = [write.name or f"w{n}" for n, write in enumerate(writes)]
            ctes = ", ".join(f"{name} AS ({write.sql})" for name, write in zip(names, writes, strict=True))
            # One array a column read (`returns`): each scans the CTE's rows, which PostgreSQL
            # stores once and reads back in the order stored, so the arrays line up row by row.
            outputs = ", ".join(
                ", ".join(f"ARRAY(SELECT {column} FROM {name})" for column in write.returns or ("*",))
                if write.done
                else "NULL"
                for name, write in zip(names, writes, strict=True)
            )
            cursor.execute(f"WITH {ctes} SELECT {outputs}", [param for write in writes for param in write.params])
            arrays = iter(cursor.fetchone())
            for write in writes:
                if write.done and write.returns:
                    returned.append(list(zip(*(next(arrays) for _ in write.returns), strict=True)))
                else:
                    returned.append(next(arrays))
        else:
            for write in writes:
                cursor.execute(write.sql, write.params)
                if not write.done:
                    returned.append(None)
                elif write.returns:
                    returned.append([tuple(row) for row in cursor.fetchall()])
                else:
                    returned.append([row[0] for row in cursor.fetchall()])
    for write, values in zip(writes, returned, strict=True):
        if write.done is not None:
            write.done(values)
