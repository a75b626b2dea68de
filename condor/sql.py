"""The INSERT Django would run for a model instance, as SQL to build on (ON CONFLICT, a CTE).

The hot paths fold several writes into one statement; taking the column list,
the value adaptation and `auto_now_add` from the ORM keeps them in step with the model.
"""

from django.db import connection
from django.db.models.lookups import In
from django.db.models.sql import InsertQuery


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
