"""Append-only for real on PostgreSQL: the triggers refuse UPDATE, DELETE and TRUNCATE from anyone
(no session switch turns them off), and the application's own role lacks the privileges anyway."""

import contextlib
import os

import psycopg
import pytest
from django.core.management.color import no_style
from django.db import connection, transaction
from django.db.utils import DatabaseError

from audit import trail as audit
from audit.db_roles import grant_statements
from audit.models import GENESIS_HASH, AuditChainHead, AuditEvent

pytestmark = pytest.mark.skipif(
    os.environ.get("DATABASE_URL", "").startswith("sqlite") or not os.environ.get("DATABASE_URL"),
    reason="PostgreSQL triggers and roles",
)

REFUSALS = {
    "update": "UPDATE approvals_auditevent SET decision = 'allow'",
    "update of nothing": "UPDATE approvals_auditevent SET decision = 'allow' WHERE false",
    "delete": "DELETE FROM approvals_auditevent",
    "truncate": "TRUNCATE approvals_auditevent",
}
# pgtrigger's triggers step aside for this; the audit log's do not.
IGNORE_SWITCH = "SET LOCAL pgtrigger.ignore = '{condor_audit_append_only,pgtrigger_audit_append_only_b26c0}'"


@pytest.fixture
def logged(db):
    return audit.record(
        audit.Kind.REGISTRY_CHANGE, actor_system=audit.command("register_tool"), tool="t", decision="created"
    )


def refused(sql: str, *, switch: bool = False) -> str:
    with pytest.raises(DatabaseError) as raised, transaction.atomic(), connection.cursor() as cursor:
        # Fire the test transaction's deferred foreign-key checks now: TRUNCATE refuses to
        # run past pending trigger events, which would hide the refusal under test.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        if switch:
            cursor.execute(IGNORE_SWITCH)
        cursor.execute(sql)
    return str(raised.value)


@pytest.mark.parametrize("statement", REFUSALS, ids=list(REFUSALS))
@pytest.mark.parametrize("switch", [False, True], ids=["plain", "with pgtrigger.ignore"])
def test_the_owner_cannot_change_or_remove_audit_rows(logged, statement, switch):
    assert "the audit log is append-only" in refused(REFUSALS[statement], switch=switch)
    logged.refresh_from_db()
    assert logged.decision == "created"


def test_the_orm_cannot_delete_an_audit_row_either(logged):
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.filter(pk=logged.pk).delete()
    assert AuditEvent.objects.filter(pk=logged.pk).exists()


def test_a_chain_head_only_moves_forward_by_one_or_two(logged):
    # Two: a suspend's verdict and its park, linked in one statement (migration 0017).
    assert "only advances by one or two" in refused("UPDATE approvals_auditchainhead SET seq = seq + 3")
    assert "only advances by one or two" in refused("UPDATE approvals_auditchainhead SET seq = seq")
    assert "only advances by one or two" in refused("UPDATE approvals_auditchainhead SET seq = 0")
    assert "append-only" in refused("DELETE FROM approvals_auditchainhead")
    assert "append-only" in refused("TRUNCATE approvals_auditchainhead")
    assert AuditChainHead.objects.get(chain="global").seq == 1


# --- the production arrangement: the application's role ------------------------------------------


def _owner_connection() -> psycopg.Connection:
    """A second connection to the test database, as the owner (not Django's, which is in a test transaction)."""
    settings = connection.settings_dict
    params = {
        "dbname": settings["NAME"],
        "user": settings["USER"],
        "password": settings["PASSWORD"],
        "host": settings["HOST"],
        "port": settings["PORT"],
    }
    return psycopg.connect(**{key: value for key, value in params.items() if value})


ATTEMPTS = {
    "update": "UPDATE approvals_auditevent SET decision = 'allow'",
    "delete": "DELETE FROM approvals_auditevent",
    "truncate": "TRUNCATE approvals_auditevent",
    "ignore switch then update": f"{IGNORE_SWITCH}; UPDATE approvals_auditevent SET decision = 'allow'",
    "ignore switch then delete": f"{IGNORE_SWITCH}; DELETE FROM approvals_auditevent",
    "disable the trigger": "ALTER TABLE approvals_auditevent DISABLE TRIGGER USER",
    "delete a chain head": "DELETE FROM approvals_auditchainhead",
}


@contextlib.contextmanager
def as_the_application_role():
    """A connection acting as the application's role, in one transaction rolled back at the end:
    the role, its grants and the rows it writes vanish with it, and no other test run sees them."""
    role = f"condor_app_test_{os.getpid()}"
    with _owner_connection() as conn:
        conn.execute(f"CREATE ROLE {role} NOLOGIN")
        for sql in grant_statements(role):
            conn.execute(sql)
        conn.execute(f"SET ROLE {role}")
        yield conn
        conn.rollback()


def first_row_and_new_head(conn, chain: str, digest: str, *, prev_hash: str = GENESIS_HASH) -> None:
    """A chain's first row (hashed `digest`, linked to `prev_hash`) and its head, not yet moved onto it."""
    conn.execute(
        "INSERT INTO approvals_auditevent (at, kind, actor, patient_ref, tool, op, decision, rule_id, data, "
        "chain, seq, prev_hash, hash) VALUES (now(), 'registry_change', 'command:test', '', 't', '', "
        "'created', '', '{}', %s, 1, %s, %s)",
        [chain, prev_hash, digest],
    )
    conn.execute("INSERT INTO approvals_auditchainhead (chain, seq, hash) VALUES (%s, 0, %s)", [chain, GENESIS_HASH])


def append_as_the_application(conn, chain: str, digest: str = "a" * 64) -> None:
    """One row on a new chain and its head moved onto it, as an append writes them."""
    first_row_and_new_head(conn, chain, digest)
    conn.execute(
        "UPDATE approvals_auditchainhead SET seq = 1, prev_hash = hash, hash = %s WHERE chain = %s", [digest, chain]
    )


def test_the_application_role_may_append_and_read_but_nothing_else(db):
    outcomes = {}
    with as_the_application_role() as conn:
        append_as_the_application(conn, "role-test")
        assert conn.execute("SELECT count(*) FROM approvals_auditevent WHERE chain = 'role-test'").fetchone() == (1,)
        for name, sql in ATTEMPTS.items():
            try:
                with conn.transaction():  # a savepoint: one refusal does not end the others
                    for statement in sql.split("; "):
                        conn.execute(statement)
                outcomes[name] = "done"
            except psycopg.errors.InsufficientPrivilege as error:
                outcomes[name] = (
                    "permission denied"
                    if "permission denied" in str(error) or "must be owner" in str(error)
                    else str(error)
                )
    assert outcomes == {name: "permission denied" for name in ATTEMPTS}


def test_the_suites_flush_between_transactional_tests_turns_the_triggers_back_on(logged):
    # tests/conftest.py switches the triggers off for the flush after a transactional test;
    # if it forgot to switch them back, every later test would run on an unguarded log.
    tables = [AuditEvent._meta.db_table, AuditChainHead._meta.db_table]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # as in refused(): TRUNCATE needs no pending checks
        for statement in connection.ops.sql_flush(no_style(), tables):
            cursor.execute(statement)
        assert "the audit log is append-only" in refused(REFUSALS["update of nothing"])
        transaction.set_rollback(True)  # the logged row comes back
    assert AuditEvent.objects.filter(pk=logged.pk).exists()


FORGED_MOVES = {
    "one link on, to a hash of its choosing": "UPDATE approvals_auditchainhead "
    "SET seq = seq + 1, prev_hash = hash, hash = repeat('f', 64) WHERE chain = 'role-test'",
    "two links on, to a hash of its choosing": "UPDATE approvals_auditchainhead "
    "SET seq = seq + 2, prev_hash = hash, hash = repeat('f', 64) WHERE chain = 'role-test'",
    "onto its own row, forgetting the hash it replaced": "UPDATE approvals_auditchainhead "
    "SET seq = 1, prev_hash = repeat('f', 64), hash = repeat('a', 64) WHERE chain = 'role-test'",
    "a new head ahead of its rows": "INSERT INTO approvals_auditchainhead (chain, seq, prev_hash, hash) "
    "VALUES ('role-test-new', 1, repeat('0', 64), repeat('f', 64))",
}


@pytest.mark.parametrize("move", FORGED_MOVES, ids=list(FORGED_MOVES))
def test_the_application_role_moves_a_head_only_onto_the_rows_it_appended(db, move):
    with as_the_application_role() as conn:
        first_row_and_new_head(conn, "role-test", "a" * 64)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="audit chain head"):
            conn.execute(FORGED_MOVES[move])


def test_a_row_that_does_not_link_to_the_head_cannot_carry_it(db):
    with as_the_application_role() as conn:
        first_row_and_new_head(conn, "role-test", "a" * 64, prev_hash="e" * 64)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only onto the rows appended"):
            conn.execute(
                "UPDATE approvals_auditchainhead SET seq = 1, prev_hash = hash, hash = repeat('a', 64) "
                "WHERE chain = 'role-test'"
            )
