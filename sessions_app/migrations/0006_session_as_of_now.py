"""A function that reads a session with a snapshot of its own, for the gate's one-statement lock.

The gate judges a call on its session as it is once the run's lock is granted: a taint
committed by the transaction it waited for must count. Joined in the locking statement,
the session would be read with that statement's snapshot, taken before the wait. A
VOLATILE function takes a fresh snapshot for each query it runs (READ COMMITTED), so
called on the row the lock returned, it reads the session as of after the wait
(approvals/gate.py). PL/pgSQL keeps the query's plan per connection; the result is the
table's own row type, so a column added later is part of it.
"""

from django.db import migrations

CREATE = """
CREATE FUNCTION condor_session_as_of_now(wanted uuid) RETURNS SETOF sessions_app_session
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN QUERY SELECT * FROM sessions_app_session WHERE id = wanted;
END
$$
"""
DROP = "DROP FUNCTION condor_session_as_of_now(uuid)"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0005_message_session_index_covered_by_session_seq")]
    operations = [migrations.RunPython(create, drop)]
