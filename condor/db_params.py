"""A field's value as the database driver takes it, what `Field.get_db_prep_save` returns, for less.

A hot-path INSERT adapts every column's value through the ORM's chain
(`get_db_prep_save` → `get_db_prep_value` → `get_prep_value` → `to_python`): five calls
and as many checks a column, for values that are already what the driver takes. A
gate call writes ~40 columns, a suspend ~90. `adapter(field, db)` gives a function
that returns such a value as it is, in the one case where the ORM's chain would
return it unchanged too (or hand it to the same backend operation), and hands every
other value to the field's own `get_db_prep_save`:

- only for a field whose class uses Django's own methods for those steps, so a field
  that overrides one (a subclass with its own conversion) always takes its own path;
- only for a value of the exact type that path lets through untouched: `str` for text,
  `bool`, `int`, an aware `datetime`, a `uuid.UUID`, a `dict` or `list` for JSON, and
  None, saved as NULL; anything else (a lazy string, a subclass, a naive datetime, an
  expression) goes the long way, with its warnings and errors.

tests/test_db_params.py holds the two equal on every hot model's columns.
"""

import datetime
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db.models import BooleanField, CharField, DateTimeField, Field, ForeignKey, IntegerField, JSONField, \
    TextField, UUIDField


def _uses(cls, **methods) -> bool:
    """Whether `cls` resolves each named method to the given implementation (none overridden on the way)."""
    return all(getattr(cls, name) is implementation for name, implementation in methods.items())


def _shortcut(field, db) -> tuple[tuple, Callable | None] | None:
    """(the value types let through, what becomes of such a value, None: nothing) for `field` on `db`,
    or None: the long way only."""
    cls = type(field)
    plain_save = cls.get_db_prep_save is Field.get_db_prep_save
    plain_value = cls.get_db_prep_value is Field.get_db_prep_value
    if plain_save and plain_value and cls.get_prep_value in (CharField.get_prep_value, TextField.get_prep_value):
        return (str,), None
    if plain_save and plain_value and cls.get_prep_value is BooleanField.get_prep_value:
        return (bool,), None
    if plain_save and _uses(cls, get_db_prep_value=IntegerField.get_db_prep_value,
                            get_prep_value=IntegerField.get_prep_value):
        internal, adapt = field.get_internal_type(), db.ops.adapt_integerfield_value
        return (int,), lambda value: adapt(value, internal)
    if plain_save and settings.USE_TZ and _uses(cls, get_db_prep_value=DateTimeField.get_db_prep_value,
                                                get_prep_value=DateTimeField.get_prep_value,
                                                to_python=DateTimeField.to_python):
        return (datetime.datetime,), db.ops.adapt_datetimefield_value  # aware ones only: see adapter()
    if plain_save and cls.get_db_prep_value is UUIDField.get_db_prep_value:
        return (uuid.UUID,), None if db.features.has_native_uuid_field else (lambda value: value.hex)
    if _uses(cls, get_db_prep_save=JSONField.get_db_prep_save, get_db_prep_value=JSONField.get_db_prep_value,
             get_prep_value=Field.get_prep_value):
        encoder, adapt = field.encoder, db.ops.adapt_json_value
        return (dict, list), lambda value: adapt(value, encoder)
    return None


def adapter(field, db, *, saving: bool = True) -> Callable:
    """A function of one value giving `field.get_db_prep_save(value, connection=db)`, shortcut where it is safe.

    `saving=False`: `field.get_db_prep_value(value, db, prepared=False)` instead, a lookup's parameter
    (condor.sql.db_value). The two differ only for None (a JSONField's), "" on a foreign key and
    expressions: those three take the long way there.
    """
    if saving:
        def long_way(value):
            return field.get_db_prep_save(value, connection=db)
    else:
        def long_way(value):
            return field.get_db_prep_value(value, db, prepared=False)

    key = type(field) is ForeignKey
    # A foreign key saves what its target field saves; "" is the key's own to decide (long way).
    found = _shortcut(field.target_field if key else field, db)
    if found is None:
        return long_way
    types, convert = found
    # A naive datetime goes the long way: Django warns, then makes it aware.
    aware_only = types == (datetime.datetime,)
    keyed_text = key and types == (str,)
    # Saved, None is SQL NULL for every field shortcut here (a JSONField's JSON null is Value(None)).
    # As a lookup's parameter a JSONField's None is JSON null: there None goes the long way.
    null = saving

    def adapt(value):
        if type(value) in types and not (aware_only and value.tzinfo is None) and not (keyed_text and value == ""):
            return value if convert is None else convert(value)
        return None if value is None and null else long_way(value)
    return adapt
