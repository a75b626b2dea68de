"""The database guards on SQLite that django-pgtrigger installs on PostgreSQL: the audit log
is append-only and a session's taint is monotone, for `make run` too.

Installed by migration 0002 and again after every `migrate` (post_migrate, wired in
apps.py): to change a column SQLite rebuilds the whole table (create, copy, drop, rename),
and dropping the old table drops its triggers, so any later migration that alters
sessions_app_session or approvals_auditevent would otherwise leave them unguarded.
"""

from django.db import connections

# name -> (table, CREATE TRIGGER statement); IF NOT EXISTS: installing twice changes nothing.
SQLITE_TRIGGERS = {
    "condor_taint_is_monotone": (
        "sessions_app_session",
        """
        CREATE TRIGGER IF NOT EXISTS condor_taint_is_monotone
        BEFORE UPDATE OF tainted ON sessions_app_session
        WHEN OLD.tainted = 1 AND NEW.tainted = 0
        BEGIN SELECT RAISE(ABORT, 'a tainted session can never become untainted'); END;
    """,
    ),
    "condor_audit_no_update": (
        "approvals_auditevent",
        """
        CREATE TRIGGER IF NOT EXISTS condor_audit_no_update BEFORE UPDATE ON approvals_auditevent
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    """,
    ),
    "condor_audit_no_delete": (
        "approvals_auditevent",
        """
        CREATE TRIGGER IF NOT EXISTS condor_audit_no_delete BEFORE DELETE ON approvals_auditevent
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    """,
    ),
}


def install(execute, tables=None) -> None:
    """Create every guard whose table is in `tables` (None: all) with `execute(sql)`."""
    for table, sql in SQLITE_TRIGGERS.values():
        if tables is None or table in tables:
            execute(sql)


def uninstall(execute) -> None:
    for name in SQLITE_TRIGGERS:
        execute(f"DROP TRIGGER IF EXISTS {name}")


def reinstall_after_migrate(sender, using="default", **kwargs) -> None:
    """post_migrate: put back the guards a table rebuild dropped (a migrate to an old state may lack a table)."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    tables = set(connection.introspection.table_names())
    with connection.cursor() as cursor:
        install(cursor.execute, tables)
