"""`make run` keeps its data on SQLite: the audit log is append-only and taint monotone there too.

The suite runs on PostgreSQL, so the SQLite triggers (sessions_app/migrations/0002) are
installed here by the migration's own function on a bare SQLite database holding just
the guarded columns.
"""

import importlib
import sqlite3
from types import SimpleNamespace

import pytest

guards = importlib.import_module("sessions_app.migrations.0002_sqlite_guards")


@pytest.fixture
def sqlite():
    database = sqlite3.connect(":memory:", isolation_level=None)
    database.execute("CREATE TABLE approvals_auditevent (id INTEGER PRIMARY KEY, decision TEXT)")
    database.execute("CREATE TABLE sessions_app_session (id INTEGER PRIMARY KEY, tainted BOOL)")
    guards.install(None, SimpleNamespace(connection=SimpleNamespace(vendor="sqlite"), execute=database.execute))
    database.execute("INSERT INTO approvals_auditevent (decision) VALUES ('created')")
    database.execute("INSERT INTO sessions_app_session (tainted) VALUES (1)")
    yield database
    database.close()


@pytest.mark.parametrize(
    "statement", ["UPDATE approvals_auditevent SET decision = 'allow'", "DELETE FROM approvals_auditevent"]
)
def test_an_audit_row_cannot_be_changed_or_removed_on_sqlite(sqlite, statement):
    with pytest.raises(sqlite3.IntegrityError, match="the audit log is append-only"):
        sqlite.execute(statement)
    assert sqlite.execute("SELECT decision FROM approvals_auditevent").fetchall() == [("created",)]


def test_an_audit_row_can_still_be_appended_on_sqlite(sqlite):
    sqlite.execute("INSERT INTO approvals_auditevent (decision) VALUES ('allow')")
    assert sqlite.execute("SELECT count(*) FROM approvals_auditevent").fetchone() == (2,)


def test_a_tainted_session_stays_tainted_on_sqlite(sqlite):
    with pytest.raises(sqlite3.IntegrityError, match="never become untainted"):
        sqlite.execute("UPDATE sessions_app_session SET tainted = 0")
    assert sqlite.execute("SELECT tainted FROM sessions_app_session").fetchall() == [(1,)]
