"""The INSERT Django would run for a model instance, as SQL to build on (ON CONFLICT, a CTE).

The hot paths fold several writes into one statement (`run_together`); taking the
column list, the value adaptation and `auto_now_add` from the ORM keeps them in
step with the model.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q
from django.db.models.lookups import In
from django.db.models.sql import InsertQuery, UpdateQuery


def insert_sql(obj, *, returning: bool = True) -> tuple[str, list]:
    """`INSERT INTO table (...) VALUES (...)` for `obj` (every concrete column but an auto pk), RETURNING pk."""
    model = type(obj)
    fields = [field for field in model._meta.concrete_fields
              if not (field.primary_key and field.get_internal_type() in ("AutoField", "BigAutoField"))]
    query = InsertQuery(model)
    query.insert_values(fields, [obj])
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = [model._meta.pk] if returning else None
    [(sql, params)] = compiler.as_sql()
    return sql, list(params)


def db_value(model, field_name: str, value):
    """`value` as `model.field_name`'s column holds it on this database, for a raw statement's parameters.

    SQLite keeps a UUID as 32 hex digits and a datetime as naive UTC text; a raw
    parameter must match that form, or its comparisons silently miss.
    """
    return model._meta.get_field(field_name).get_db_prep_value(value, connection, prepared=False)


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


def update_sql(model, pk, **values) -> tuple[str, list]:
    """`UPDATE table SET ... WHERE pk = ...` as the ORM would send it (values adapted to the database)."""
    query = UpdateQuery(model)
    query.add_update_values(values)
    query.add_q(Q(pk=pk))
    sql, params = query.get_compiler(connection=connection).as_sql()
    return sql, list(params)


@dataclass(frozen=True)
class Write:
    """One data-modifying statement to run together with others (`run_together`).

    `done`, if given, is called with the values of the statement's RETURNING (one
    column, any number of rows) once it has run; it may raise to refuse the result,
    which rolls the caller's transaction back.
    """

    sql: str
    params: list
    done: Callable[[list], None] | None = None


def run_together(writes: list[Write]) -> None:
    """Run `writes` in one round trip on PostgreSQL: each a data-modifying CTE of one statement.

    Elsewhere (SQLite has no data-modifying CTE; its transactions hold the whole
    database, so nothing waits) they run one after another, in list order.
    The CTEs all see the database as it was before the statement, and all of them
    run: no write may need another's rows, and a write whose result is refused
    (its `done` raises) relies on the caller's transaction rolling the others back.
    The `done` callbacks are called in list order after everything has run.
    """
    returned: list[list] = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and len(writes) > 1:
            ctes = ", ".join(f"w{n} AS ({write.sql})" for n, write in enumerate(writes))
            outputs = ", ".join(f"ARRAY(SELECT * FROM w{n})" if write.done else "NULL"
                                for n, write in enumerate(writes))
            cursor.execute(f"WITH {ctes} SELECT {outputs}", [param for write in writes for param in write.params])
            returned = list(cursor.fetchone())
        else:
            for write in writes:
                cursor.execute(write.sql, write.params)
                returned.append([row[0] for row in cursor.fetchall()] if write.done else None)
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
