"""The INSERT Django would run for a model instance, as SQL to build on (ON CONFLICT, a CTE).

The hot paths fold several writes into one statement (`run_together`); taking the
column list, the value adaptation and `auto_now_add` from the ORM keeps them in
step with the model.
"""

import re
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Q
from django.db.models.lookups import In
from django.db.models.sql import InsertQuery, UpdateQuery

from condor.db_params import adapter


def kept(key, build: Callable, *, model=None, db=None):
    """`build(db)` for `key`, kept on the connection `db` (default: this thread's default connection).

    A hot path's statement text (and how to read its rows) is the same every
    request, while the ORM compiles it anew each time: on a gate call that was a
    third of its Python time (bench/README.md, issue 11). Kept on the connection
    wrapper, whose vendor, quoting and features never change, so SQLite and
    PostgreSQL never share a text. `model`: the text is built from this model's
    columns; a change to them (its table renamed, fields added: Django rebuilds
    `concrete_fields` when the app registry changes) builds it again.
    """
    db = connections[DEFAULT_DB_ALIAS] if db is None else db
    try:
        store = db.condor_kept
    except AttributeError:
        store = db.condor_kept = {}
    entry = store.get(key)
    if model is None:
        if entry is None:
            entry = store[key] = build(db)
        return entry
    meta = model._meta
    if entry is None or entry[0] is not meta.concrete_fields or entry[1] != meta.db_table:
        entry = store[key] = (meta.concrete_fields, meta.db_table, build(db))
    return entry[2]


def _insert_fields(model) -> list:
    return [field for field in model._meta.concrete_fields
            if not (field.primary_key and field.get_internal_type() in ("AutoField", "BigAutoField"))]


def insert_attnames(model) -> list[str]:
    """The attnames of the columns `insert_sql` writes, in the order of its parameters."""
    return [field.attname for field in _insert_fields(model)]


def _inserted_fields(model) -> list | None:
    """The fields an INSERT of `model` names (every concrete one but an auto pk); None if a
    field's placeholder may depend on its value (`get_placeholder`), so no text can be kept."""
    fields = _insert_fields(model)
    return None if any(hasattr(field, "get_placeholder") for field in fields) else fields


def _compiled_insert(objs: list, db, *, returning: bool = True) -> tuple[str, list]:
    """The ORM's own INSERT of `objs` (one model's), as bulk_create compiles it."""
    model = type(objs[0])
    query = InsertQuery(model)
    query.insert_values(_insert_fields(model), objs)
    compiler = query.get_compiler(connection=db)
    compiler.returning_fields = [model._meta.pk] if returning else None
    [(sql, params)] = compiler.as_sql()
    return sql, list(params)


def _insert_adapters(model, fields: list, db) -> list[Callable]:
    return kept(("insert-adapters", model), lambda db: [adapter(field, db) for field in fields], model=model, db=db)


def insert_sql(obj, *, returning: bool = True, db=None) -> tuple[str, list]:
    """`INSERT INTO table (...) VALUES (...)` for `obj` (every concrete column but an auto pk), RETURNING pk.

    The text is the ORM's, compiled on the first insert of its kind on a connection
    and kept (`kept`); later calls only adapt the values as the ORM's compiler does
    (`pre_save`, then `get_db_prep_save`, shortcut by condor/db_params.py). A value that is an expression (a
    `DatabaseDefault`, an F()) changes the text: that insert is compiled by the ORM.
    """
    db = connections[DEFAULT_DB_ALIAS] if db is None else db
    model = type(obj)
    fields = kept(("insert-fields", model), lambda db: _inserted_fields(model), model=model, db=db)
    if fields is None:
        return _compiled_insert([obj], db, returning=returning)
    values = [field.pre_save(obj, True) for field in fields]
    if any(hasattr(value, "resolve_expression") for value in values):
        return _compiled_insert([obj], db, returning=returning)
    compiled = []

    def build(db):
        compiled.append(_compiled_insert([obj], db, returning=returning))
        return compiled[0][0]

    sql = kept(("insert", model, returning), build, model=model, db=db)
    if compiled:  # compiled just now: the ORM's own parameters
        return compiled[0]
    params = [adapt(value) for adapt, value in zip(_insert_adapters(model, fields, db), values)]
    if any(hasattr(param, "as_sql") for param in params):  # a field that prepares its value as an expression
        return _compiled_insert([obj], db, returning=returning)
    return sql, params


# A text is kept for each row count up to this: the hot paths insert two or three events at
# once. A larger batch's compile is shared by its rows, and keeping every count a batch ever
# had would hold a VALUES text of each length (SQLite) for the connection's life.
KEPT_ROWS_AT_MOST = 8


def insert_rows_sql(objs: list) -> tuple[str, list]:
    """`insert_sql` for several instances of one model: one INSERT, their pks RETURNING in list order.

    One row takes `insert_sql`'s kept text. Several take the text the ORM compiles for
    bulk_create (on PostgreSQL its UNNEST form, a parameter a column; elsewhere a VALUES
    row each), compiled on the first insert of that many rows on a connection and kept
    with where its parameters go (up to KEPT_ROWS_AT_MOST rows). The layout is read off that first compile, whose
    parameters must be exactly this function's own adaptation of the same values;
    otherwise every such insert is compiled by the ORM.
    """
    if len(objs) == 1:
        return insert_sql(objs[0])
    db, model = connections[DEFAULT_DB_ALIAS], type(objs[0])
    fields = kept(("insert-fields", model), lambda db: _inserted_fields(model), model=model, db=db)
    if fields is None or len(objs) > KEPT_ROWS_AT_MOST:
        return _compiled_insert(objs, db)
    adapters = _insert_adapters(model, fields, db)
    compiled = []

    def build(db):
        compiled.append(_compiled_insert(objs, db))
        # The values as the compile took them (pre_save has run: auto_now_add set them on the rows).
        values = [[getattr(obj, field.attname) for field in fields] for obj in objs]
        return compiled[0][0], _layout(compiled[0][1], values, adapters)

    sql, layout = kept(("insert-rows", model, len(objs)), build, model=model, db=db)
    if compiled:
        return compiled[0]
    values = [[field.pre_save(obj, True) for field in fields] for obj in objs]
    if layout is None or any(hasattr(value, "resolve_expression") for row in values for value in row):
        return _compiled_insert(objs, db)
    rows = [[adapt(value) for adapt, value in zip(adapters, row)] for row in values]
    if any(hasattr(param, "as_sql") for row in rows for param in row):
        return _compiled_insert(objs, db)
    return sql, _arranged(layout, rows)


def _arranged(layout: str, rows: list[list]) -> list:
    """Adapted rows as the kept text takes them: a list a column ("columns"), or row after row ("rows")."""
    if layout == "columns":
        return [list(column) for column in zip(*rows)]
    return [param for row in rows for param in row]


def _layout(compiled: list, values: list[list], adapters: list) -> str | None:
    """"columns" or "rows": how the ORM laid out `values` (row by row, before adaptation) in its
    parameters `compiled`; None when neither layout of this module's own adaptation equals them."""
    if any(hasattr(value, "resolve_expression") for row in values for value in row):
        return None
    rows = [[adapt(value) for adapt, value in zip(adapters, row)] for row in values]
    for layout in ("columns", "rows"):
        if _equal(_arranged(layout, rows), compiled, nested=layout == "columns"):
            return layout
    return None


def _equal(mine: list, theirs, *, nested: bool) -> bool:
    if type(theirs) is not list or len(mine) != len(theirs):
        return False
    if nested:
        return all(_equal(column, other, nested=False) for column, other in zip(mine, theirs))
    return all(map(_same_param, mine, theirs))


def _same_param(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if hasattr(a, "obj") and hasattr(a, "dumps"):  # psycopg's Jsonb: no equality of its own
        return a.obj == b.obj and a.dumps is b.dumps
    return a == b


def columns(model, table: str | None = None, *, db=None) -> str:
    """`model`'s columns in field order, for a SELECT or RETURNING, each qualified by `table`
    (default: the model's table; "": unqualified, as SQLite's RETURNING wants them).

    Named rather than `*`: `*` follows the table's physical column order, which a
    migration that adds a column can make differ from the model's.
    """
    def build(db):
        name = model._meta.db_table if table is None else table
        qualifier = f"{db.ops.quote_name(name)}." if name else ""
        return ", ".join(f"{qualifier}{db.ops.quote_name(field.column)}" for field in model._meta.concrete_fields)
    return kept(("columns", model, table), build, model=model, db=db)


def reader(model, *, db=None) -> Callable[[tuple], object]:
    """A function building a `model` instance from the values of its `columns()` (in that order), as the ORM would.

    Each value goes through the converters the ORM's compiler applies to that
    column on this database (JSON text decoded, SQLite's datetimes and UUIDs parsed),
    then `model.from_db` (so a model's own `from_db` runs too).
    """
    def build(db):
        fields = model._meta.concrete_fields
        alias, names, converters = db.alias, [field.attname for field in fields], {}
        for index, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            functions = db.ops.get_db_converters(column) + column.get_db_converters(db)
            if functions:
                converters[index] = (functions, column)
        return lambda row: model.from_db(alias, names, _converted(row, converters, db))
    return kept(("reader", model), build, model=model, db=db)


def _converted(row: tuple, converters: dict, db):
    """`row` through the ORM's converters: {index: (functions, expression)}, as SQLCompiler.get_converters gives."""
    if not converters:
        return row
    row = list(row)
    for index, (functions, expression) in converters.items():
        value = row[index]
        for function in functions:
            value = function(value, expression, db)
        row[index] = value
    return row


@dataclass(frozen=True)
class Compiled:
    """A queryset's SELECT as the ORM compiled it, and how to build its instances from a row."""

    sql: str
    stand_ins: tuple  # its parameters as compiled: the queryset's stand-in values and the ORM's own constants
    read: Callable[[tuple], object]  # a row → the model instance, its select_related ones attached

    def params(self, values: dict) -> list:
        """The statement's parameters, each stand-in (as the database takes it) replaced by `values[stand_in]`."""
        return [values.get(param, param) if isinstance(param, Hashable) else param for param in self.stand_ins]


def _populate(info: dict, row: tuple, db):
    fields = [row[index] for index in info["select_fields"]]
    obj = info["model"].from_db(db.alias, info["names"], fields) if fields[info["pk"]] is not None else None
    for related in info.get("related_klass_infos", ()):
        child = _populate(related, row, db)
        if obj is not None:
            related["local_setter"](obj, child)
            if child is not None:
                related["remote_setter"](child, obj)
    return obj


def _names(info: dict, select: list) -> None:
    targets = [select[index][0].target for index in info["select_fields"]]
    info["names"] = [field.attname for field in targets]
    info["pk"] = next(n for n, field in enumerate(targets) if field.primary_key)
    for related in info.get("related_klass_infos", ()):
        _names(related, select)


def compiled(key, queryset: Callable[[], object], *, model, db=None) -> Compiled:
    """The SELECT of `queryset()` (select_related, select_for_update; no annotations), compiled once per connection.

    `queryset()` is built with stand-in values where the caller's own go (values no
    other parameter of the statement has): the caller executes `.sql` with
    `.params({stand-in: value})`, and reads each row with `.read`, which applies the ORM's converters and
    attaches the select_related instances as the ORM's iterator would (a
    values_list() query: the row's values, converted).
    """
    def build(db):
        compiler = queryset().query.get_compiler(connection=db)
        sql, stand_ins = compiler.as_sql()
        converters = compiler.get_converters([column for column, _, _ in compiler.select])
        info = compiler.klass_info
        if not compiler.query.default_cols:  # a values_list() / values() query: its row, converted
            return Compiled(sql, tuple(stand_ins), lambda row: tuple(_converted(row, converters, db)))
        _names(info, compiler.select)
        return Compiled(sql, tuple(stand_ins), lambda row: _populate(info, _converted(row, converters, db), db))
    return kept(key, build, model=model, db=db)


def first_row(sql: str, params: list) -> tuple | None:
    """The first row `sql` returns (a kept statement's), or None."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


_STAND_IN = uuid.UUID("00000000-0000-4000-8000-00000000c0de")


def rows_of(queryset_for: Callable, model, field_name: str, value) -> list[tuple]:
    """The rows of `queryset_for(value)`, a values_list() read filtered on `model.field_name` (a UUID),
    compiled once per connection (`compiled`) and returned as the driver gives them.

    For long reads whose columns need no converter (text, casts to text, plain numbers):
    the history's two reads (sessions_app/history.py), where the ORM's building, compiling
    and per-row converters were a fifth of the request's CPU. `queryset_for` is the key: a
    module-level function, not a lambda made per call.
    """
    query = compiled(("rows", queryset_for), lambda: queryset_for(_STAND_IN), model=model)
    stand_in = db_value(model, field_name, _STAND_IN)
    with connection.cursor() as cursor:
        cursor.execute(query.sql, query.params({stand_in: db_value(model, field_name, value)}))
        return cursor.fetchall()


def db_value(model, field_name: str, value):
    """`value` as `model.field_name`'s column holds it on this database, for a raw statement's parameters.

    SQLite keeps a UUID as 32 hex digits and a datetime as naive UTC text; a raw
    parameter must match that form, or its comparisons silently miss.
    """
    def build(db):
        return adapter(model._meta.get_field(field_name), db, saving=False)
    return kept(("db-value", model, field_name), build, model=model)(value)


def choice_literal(value: str) -> str:
    """A fixed choice value (a status, a reason code) written into a statement's text as a quoted literal.

    PostgreSQL plans a prepared statement once for every execution (its generic plan) only
    while that plan is expected to cost no more than one made for the values at hand. A
    status compared with a parameter is estimated from the statistics in one plan and not in
    the other (nor can it match a partial index on that status), which kept statements
    re-planned on every execution (bench/README.md, "Plans made once"). Only plain choice
    values (lowercase letters, digits, underscores) can be written in.
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


def insert_if_sql(obj, condition: tuple[str, list]) -> tuple[str, list]:
    """`INSERT INTO table (...) SELECT ... WHERE condition RETURNING pk`: `obj` inserted only while `condition` holds.

    The check and the insert are one statement, so nothing the condition reads can
    change between them within this transaction's view (PostgreSQL and SQLite alike).
    """
    sql, params = insert_sql(obj, returning=False)
    head, values = sql.split(" VALUES (", 1)
    pk = connection.ops.quote_name(type(obj)._meta.pk.column)
    return f"{head} SELECT {values[:-1]} WHERE {condition[0]} RETURNING {pk}", [*params, *condition[1]]


def _compiled_update(model, pk, values: dict, db) -> tuple[str, list]:
    query = UpdateQuery(model)
    query.add_update_values(values)
    query.add_q(Q(pk=pk))
    sql, params = query.get_compiler(connection=db).as_sql()
    return sql, list(params)


def _update_adapters(model, names: tuple, db) -> list[Callable] | None:
    """The adapters of the columns `names` (condor/db_params.py); None if a field's placeholder may
    depend on its value (`get_placeholder`), so no text can be kept."""
    fields = [model._meta.get_field(name) for name in names]
    return None if any(hasattr(field, "get_placeholder") for field in fields) else [adapter(field, db) for field in fields]


def update_sql(model, pk, *, db=None, **values) -> tuple[str, list]:
    """`UPDATE table SET ... WHERE pk = ...` as the ORM would send it (values adapted to the database).

    The text is kept per connection and set of columns, as `insert_sql` keeps its
    own, and so are the columns' adapters (a decision saves every column of its approval);
    a value that is an expression or a model instance goes through the ORM.
    """
    db = connections[DEFAULT_DB_ALIAS] if db is None else db
    names = tuple(values)
    adapters = kept(("update-adapters", model, names), lambda db: _update_adapters(model, names, db),
                    model=model, db=db)
    if adapters is None or any(hasattr(value, "resolve_expression") or hasattr(value, "prepare_database_save")
                               for value in values.values()):
        return _compiled_update(model, pk, values, db)
    prepared = [adapt(value) for adapt, value in zip(adapters, values.values())]
    if any(hasattr(value, "as_sql") for value in prepared):
        return _compiled_update(model, pk, values, db)
    compiled = []

    def build(db):
        compiled.append(_compiled_update(model, pk, values, db))
        return compiled[0][0]

    # The ORM writes a None as `= NULL` in the text: which columns are NULL is part of the key.
    nulls = tuple(value is None for value in prepared)
    sql = kept(("update", model, names, nulls), build, model=model, db=db)
    if compiled:
        return compiled[0]
    return sql, [*(value for value in prepared if value is not None),
                 model._meta.pk.get_db_prep_value(pk, db, prepared=False)]


def _save_sql(obj) -> tuple[str, list]:
    model = type(obj)
    values = {field.attname: field.pre_save(obj, False) for field in model._meta.concrete_fields
              if not field.primary_key}
    return update_sql(model, obj.pk, **values)


def save_write(obj) -> "Write":
    """`save_row(obj)` as a statement for the caller to send with its own (`run_together`), for a row
    its caller holds locked (so it is there to update)."""
    return Write(*_save_sql(obj))


def save_row(obj) -> None:
    """`obj.save()` for a row that exists (one its caller has locked): the same UPDATE of every column, kept.

    For models without save() overrides or save signals (the caller knows); a row
    that is gone after all is left to `save()`, which then inserts it, as it would.
    """
    sql, params = _save_sql(obj)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        updated = cursor.rowcount
    if updated:
        obj._state.adding, obj._state.db = False, connection.alias
    else:
        obj.save()


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
            ctes = ", ".join(f"{name} AS ({write.sql})" for name, write in zip(names, writes))
            # One array a column read (`returns`): each scans the CTE's rows, which PostgreSQL
            # stores once and reads back in the order stored, so the arrays line up row by row.
            outputs = ", ".join(
                ", ".join(f"ARRAY(SELECT {column} FROM {name})" for column in write.returns or ("*",))
                if write.done else "NULL" for name, write in zip(names, writes))
            cursor.execute(f"WITH {ctes} SELECT {outputs}", [param for write in writes for param in write.params])
            arrays = iter(cursor.fetchone())
            for write in writes:
                if write.done and write.returns:
                    returned.append(list(zip(*(next(arrays) for _ in write.returns))))
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
    for write, values in zip(writes, returned):
        if write.done is not None:
            write.done(values)


class AnyOf(In):
    """`field__any=values`: `field IN (values)`, but on PostgreSQL `field = ANY(%s)` with one array parameter.

    A sweep batch filters by a thousand ids several times; as an IN list each id is
    a placeholder that Django and psycopg process one by one and PostgreSQL parses
    anew, while an array is one value. Registered on every field by runs/apps.py.
    """

    lookup_name = "any"

    def as_postgresql(self, compiler, connection):
        if not self.rhs_is_direct_value():  # a subquery stays `IN (SELECT ...)`
            return self.as_sql(compiler, connection)
        lhs, lhs_params = self.process_lhs(compiler, connection)
        field = self.lhs.output_field
        values = [field.get_db_prep_value(value, connection, prepared=True) for value in self.rhs if value is not None]
        return f"{lhs} = ANY(%s::{field.db_type(connection)}[])", [*lhs_params, values]
