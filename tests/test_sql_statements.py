"""The hot paths' kept statement texts (condor/sql.py `kept`): the ORM's own text, per connection, rebuilt
when the model changes.

Issue 11: the ORM compiled the same INSERTs and SELECTs on every request; the hot
paths now compile each once per connection. What must still hold: the kept text
and its parameters are what the ORM would send, a SQLite connection never gets a
PostgreSQL text, and a model whose columns change gets a new text.
"""

import uuid
from unittest import mock

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.db.backends.sqlite3.base import DatabaseWrapper as SqliteWrapper
from django.db.models import Value
from django.db.models.functions import Lower
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals import audit, audit_chain, suspend, visibility
from approvals.models import Approval, ApprovalStatus, ReviewTeam, ToolCall
from approvals.models.audit import AuditChainHead
from condor.bulk import instance
from condor.sql import (
    Write,
    _compiled_insert,
    _compiled_update,
    columns,
    compiled,
    insert_sql,
    kept,
    reader,
    run_together,
    save_row,
    update_sql,
)
from runs import spine
from runs.models import Run, RunEvent
from tests.helpers.approval_loop import approval_row, parked_run
from tests.helpers.runs import open_executing_run


def sqlite_connection():
    return SqliteWrapper({**settings.DATABASES["default"], "ENGINE": "django.db.backends.sqlite3",
                          "NAME": ":memory:", "TEST": {}, "OPTIONS": {}}, alias="sqlite-only")


def plain(params):
    # psycopg's JSON adapter (Jsonb) has no equality of its own: compare what it carries.
    return [getattr(param, "obj", param) for param in params]


def rows_to_insert():
    run_id = uuid.uuid4()
    return [
        instance(RunEvent, run_id=run_id, kind="tool.allow", step_id="s", data={"n": 1}, frames=[{"type": "x"}]),
        instance(ToolCall, run_id=run_id, tool_call_id="c1", step_id="s", tool="t", op="", args={"a": [1, 2]},
                 metadata={}, decision="allow", rule_id="r", untrusted_tool=False),
        audit.entry(audit.Kind.VERDICT, actor_system="sweep", decision="allow", data={"k": "v"}),
    ]


@pytest.mark.parametrize("returning", [True, False])
def test_a_kept_insert_is_the_orms_statement_with_the_orms_parameters(returning):
    # auto_now_add stamps every pre_save anew: one instant for the kept and the ORM's parameters.
    with mock.patch("django.utils.timezone.now", return_value=timezone.now()):
        checked = [(db, obj) for db in (connection, sqlite_connection()) for obj in rows_to_insert()]
        for db, obj in checked:
            insert_sql(obj, returning=returning, db=db)  # the first compiles and keeps
            kept_sql, kept_params = insert_sql(obj, returning=returning, db=db)
            orm_sql, orm_params = _compiled_insert([obj], db, returning=returning)
            assert kept_sql == orm_sql
            assert plain(kept_params) == plain(orm_params)


def test_a_kept_update_is_the_orms_statement_with_the_orms_parameters():
    run_id, now = uuid.uuid4(), timezone.now()
    for db in (connection, sqlite_connection()):
        # A None is `= NULL` in the ORM's text: each pattern of NULLs has its own.
        for values in ({"state": "suspended", "last_activity_at": now}, {"last_activity_at": now},
                       {"closed_at": None, "summary": "s"}, {"closed_at": now, "summary": "s"}):
            update_sql(Run, run_id, db=db, **values)
            assert update_sql(Run, run_id, db=db, **values) == _compiled_update(Run, run_id, values, db)


@pytest.mark.django_db
def test_a_kept_save_of_every_column_is_the_orms_update(api):
    # A decision saves every column of its approval: text, JSON, datetimes, NULLs, a foreign key.
    _, parked = parked_run(api)
    approval = approval_row(parked["id"])
    approval.status, approval.decided_at, approval.approved_args = ApprovalStatus.APPROVED, timezone.now(), {"a": [1]}
    values = {field.attname: field.pre_save(approval, False) for field in Approval._meta.concrete_fields
              if not field.primary_key}
    for db in (connection, sqlite_connection()):
        update_sql(Approval, approval.pk, db=db, **values)  # the first compiles and keeps
        kept_sql, kept_params = update_sql(Approval, approval.pk, db=db, **values)
        orm_sql, orm_params = _compiled_update(Approval, approval.pk, values, db)
        assert kept_sql == orm_sql
        assert plain(kept_params) == plain(orm_params)


@pytest.mark.django_db  # the head lock's FOR UPDATE compiles only inside a transaction
def test_each_connection_keeps_its_own_texts():
    sqlite = sqlite_connection()
    obj = rows_to_insert()[0]
    insert_sql(obj, db=sqlite)
    assert ("insert", RunEvent, True) in sqlite.condor_kept
    insert_sql(obj)
    assert sqlite.condor_kept is not connection.condor_kept
    # The chain head's lock as each vendor takes it: SQLite has no FOR UPDATE.
    postgres_lock = kept("audit-head-lock", audit_chain._head_lock_sql, model=AuditChainHead)
    sqlite_lock = kept("audit-head-lock", audit_chain._head_lock_sql, model=AuditChainHead, db=sqlite)
    assert "FOR UPDATE" in postgres_lock
    assert "FOR UPDATE" not in sqlite_lock


def test_an_expression_value_is_compiled_by_the_orm_not_the_kept_text():
    obj = rows_to_insert()[1]
    insert_sql(obj)
    obj.step_id = Lower(Value("S"))
    sql, params = insert_sql(obj)
    assert "LOWER(%s)" in sql and "S" in params


def test_a_model_whose_table_or_fields_change_gets_a_new_text():
    built = []

    def build(db):
        built.append(Run._meta.db_table)
        return f"SELECT * FROM {Run._meta.db_table}"

    assert kept("probe", build, model=Run) == "SELECT * FROM runs_run"
    assert kept("probe", build, model=Run) == "SELECT * FROM runs_run"
    assert len(built) == 1
    with mock.patch.object(Run._meta, "db_table", "runs_renamed"):
        assert kept("probe", build, model=Run) == "SELECT * FROM runs_renamed"
        assert '"runs_renamed"."id"' in columns(Run)
    # Django rebuilds `concrete_fields` when the app registry changes (a model added, a field added).
    Run._meta._expire_cache()
    assert kept("probe", build, model=Run) == "SELECT * FROM runs_run"
    assert len(built) == 3


@pytest.mark.django_db
def test_returning_names_the_columns_so_a_run_reads_the_same_as_the_orms(api):
    run_id = open_executing_run(api)
    with transaction.atomic():
        locked = spine.lock_touched_run(run_id)
    assert "RETURNING *" not in kept(("lock_touched_run", None, False), lambda db: None, model=Run)
    fresh = Run.objects.get(pk=run_id)
    for field in Run._meta.concrete_fields:
        assert getattr(locked, field.attname) == getattr(fresh, field.attname), field.name
    assert type(locked.usage) is type(fresh.usage)  # JSON decoded by the ORM's converter


@pytest.mark.django_db
def test_save_row_sends_the_update_that_save_sends(api):
    run = Run.objects.get(pk=open_executing_run(api))
    run.summary = "kept"
    with CaptureQueriesContext(connection) as saved:
        run.save()
    run.summary = "kept again"
    with CaptureQueriesContext(connection) as kept_row:
        save_row(run)
    assert [query["sql"] for query in kept_row.captured_queries] == [
        query["sql"].replace("'kept'", "'kept again'") for query in saved.captured_queries]
    assert Run.objects.get(pk=run.pk).summary == "kept again"


@pytest.mark.django_db
def test_a_compiled_select_related_query_builds_what_the_orm_builds(api):
    run_id = open_executing_run(api)
    query = compiled("probe-run-session", lambda: Run.objects.select_related("session").filter(pk=uuid.UUID(int=0)),
                     model=Run)
    orm_sql, orm_params = (Run.objects.select_related("session").filter(pk=uuid.UUID(int=0)).query
                           .get_compiler(connection=connection).as_sql())
    assert (query.sql, query.stand_ins) == (orm_sql, tuple(orm_params))
    with connection.cursor() as cursor:
        cursor.execute(query.sql, query.params({uuid.UUID(int=0): uuid.UUID(run_id)}))
        run = query.read(cursor.fetchone())
    orm = Run.objects.select_related("session").get(pk=run_id)
    assert run.pk == orm.pk and run.state == orm.state
    assert run._state.fields_cache["session"].pk == orm.session.pk
    assert run.session.patient_ref == orm.session.patient_ref


@pytest.mark.django_db
def test_a_compiled_query_replaces_only_its_stand_ins(rita):
    # The Exists() subquery brings a constant of its own: the stand-in is found by value, not by position.
    query = compiled("probe-teams", lambda: visibility._teams(visibility._ANY_USER), model=ReviewTeam)
    assert len(query.stand_ins) == 2
    assert query.stand_ins[1] == visibility._ANY_USER
    assert query.params({visibility._ANY_USER: rita.pk}) == [query.stand_ins[0], rita.pk]


@pytest.mark.django_db
def test_the_open_cards_count_takes_its_parameters_in_the_order_the_suspend_sends_them():
    client_id, now = uuid.uuid4(), timezone.now()
    sql, params = suspend._open_cards(client_id, now, 10, connection)
    assert params == [client_id, ApprovalStatus.PENDING, now]
    assert "LIMIT 10" in sql


def test_read_known_reads_approvals_through_their_own_columns():
    sql = kept(("read_known", True), lambda db: suspend._known_sql(db, True), model=Approval)
    assert sql.startswith(f"SELECT {columns(Approval)}, ")
    # Asked in the SELECT (same suspend, run grant, prior grant), then found by the WHERE, which
    # leaves out the expiry and writes the statuses in (tests/approvals/test_hot_plans.py).
    assert sql.count("%s") == (3 + 2 + 5) + (3 + 1 + 4)
    assert reader(Approval) is reader(Approval)  # built once per connection


@pytest.mark.django_db
def test_a_write_reads_a_named_writes_returning_in_the_same_statement():
    # The audit append's form (approvals/audit_chain.py): the head's UPDATE, named, hands its
    # new values to the row's INSERT; `returns` reads several RETURNING columns as tuples. On a
    # table of the heads' shape: the heads' own moves must follow audit rows.
    table = "scratch_heads"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE {table} (chain varchar(48) PRIMARY KEY, seq bigint, "
                       "prev_hash varchar(64), hash varchar(64))")
        cursor.execute(f"INSERT INTO {table} VALUES ('t-1', 4, '', %s)", ["a" * 64])
    moved, copied = [], []
    with CaptureQueriesContext(connection) as queries:
        run_together([
            Write(f"UPDATE {table} SET seq = seq + 1, prev_hash = hash, hash = %s WHERE chain = %s "
                  "RETURNING seq, prev_hash", ["b" * 64, "t-1"], name="moved", done=moved.extend,
                  returns=("seq", "prev_hash")),
            Write(f"INSERT INTO {table} (chain, seq, hash, prev_hash) SELECT 't-2', seq, prev_hash, prev_hash "
                  "FROM moved RETURNING chain", [], done=copied.extend),
        ])
    assert len(queries) == 1
    assert moved == [(5, "a" * 64)]
    assert copied == ["t-2"]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT hash FROM {table} WHERE chain = 't-2'")
        assert cursor.fetchone() == ("a" * 64,)
