"""The same database guards on SQLite that django-pgtrigger installs on PostgreSQL."""

from django.db import migrations

SQLITE_TRIGGERS = {
    "condor_taint_is_monotone": """
        CREATE TRIGGER IF NOT EXISTS condor_taint_is_monotone
        BEFORE UPDATE OF tainted ON sessions_app_session
        WHEN OLD.tainted = 1 AND NEW.tainted = 0
        BEGIN SELECT RAISE(ABORT, 'a tainted session can never become untainted'); END;
    """,
    "condor_audit_no_update": """
        CREATE TRIGGER IF NOT EXISTS condor_audit_no_update BEFORE UPDATE ON approvals_auditevent
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    """,
    "condor_audit_no_delete": """
        CREATE TRIGGER IF NOT EXISTS condor_audit_no_delete BEFORE DELETE ON approvals_auditevent
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    """,
}


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in SQLITE_TRIGGERS.values():
        schema_editor.execute(sql)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for name in SQLITE_TRIGGERS:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0001_initial"), ("approvals", "0002_initial")]
    operations = [migrations.RunPython(install, uninstall)]
