"""A row read back through core/rows.py's `reader`, next to the instance the ORM loads: the
models the hot paths read from plain statements, on PostgreSQL (tests/test_rows.py) and on
SQLite (tests/sqlite_flow.py)."""

from django.contrib.auth import get_user_model

from agents.models import ApiClient
from approvals.models import Approval
from core.rows import column, columns, db_value, first_row, reader, table
from runs.models import Run
from sessions_app.models import Session


def models_read_by_reader() -> list:
    """Every model a hot path builds with `reader` (grep `reader(`)."""
    return [Run, Session, ApiClient, Approval, get_user_model()]


def read_back(model, pk):
    """`model`'s row `pk`, selected by its `columns()` in a plain statement and built by `reader`."""
    name = model._meta.pk.name
    row = first_row(
        f"SELECT {columns(model)} FROM {table(model)} WHERE {column(model, name)} = %s", [db_value(model, name, pk)]
    )
    return reader(model)(row)


def field_values(obj) -> list:
    """Each concrete field's value by attname, with its type and, for a datetime, its zone: equal
    values of another type (1 for True) or another zone would compare equal on their own."""
    return [
        (field.attname, type(value), value, getattr(value, "tzinfo", None))
        for field in type(obj)._meta.concrete_fields
        for value in [getattr(obj, field.attname)]
    ]


def unlike_the_orm(model, pk) -> list:
    """The fields (attname, read, loaded) where `reader`'s instance differs from the ORM's; [] when alike."""
    read, loaded = field_values(read_back(model, pk)), field_values(model._base_manager.get(pk=pk))
    return [(a[0], a[1:], b[1:]) for a, b in zip(read, loaded, strict=True) if a != b]
