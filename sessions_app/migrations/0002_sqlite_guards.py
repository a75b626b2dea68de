"""The same database guards on SQLite that django-pgtrigger installs on PostgreSQL (sessions_app/sqlite_guards.py)."""

from django.db import migrations

from sessions_app import sqlite_guards


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    sqlite_guards.install(schema_editor.execute)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    sqlite_guards.uninstall(schema_editor.execute)


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0001_initial"), ("approvals", "0002_initial")]
    operations = [migrations.RunPython(install, uninstall)]
