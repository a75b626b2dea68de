"""`field__any=values`: one array parameter where `__in` would send a placeholder a value."""

from django.db.models.lookups import In


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
