"""condor.sql.insert_rows_sql: several rows in one INSERT, its text kept once per connection and row count,
the same statement and parameters the ORM would compile for them (bulk_create's form)."""

import uuid

import pytest
from django.db import connection
from django.db.models import Value
from django.utils import timezone

from condor.sql import _compiled_insert, insert_rows_sql
from runs.models import RunEvent
from tests.helpers.clock import frozen_clock
from tests.test_db_params import _same

ROW_VALUES = [
    dict(kind="approval.consumed", step_id="s", data={"approval_id": "a"}, frames=[], inbox=None),
    dict(kind="run.resumed", step_id="", data={}, frames=[{"type": "tool-output-available", "output": [1, None]}],
         inbox={"type": "card.removed", "card": {"id": "c"}}),
    dict(kind="tool.allow", step_id="ü ✓", data={"n": 1.5}, frames=[{}], inbox={}),
]


def rows(count: int) -> list[RunEvent]:
    run_id = uuid.uuid4()
    return [RunEvent(run_id=run_id, **ROW_VALUES[n % len(ROW_VALUES)]) for n in range(count)]


def same_params(mine: list, orm: list) -> bool:
    flat = [(a, b) for x, y in zip(mine, orm) for a, b in (zip(x, y) if type(x) is list else [(x, y)])]
    return len(mine) == len(orm) and all(_same(a, b) for a, b in flat)


@pytest.mark.parametrize("count", [2, 3])
def test_the_kept_insert_is_the_orms_statement_with_the_orms_parameters(db, monkeypatch, count):
    frozen_clock(monkeypatch, timezone.now())  # created_at (auto_now_add) the same in both
    insert_rows_sql(rows(count))  # compiled by the ORM and kept
    batch = rows(count)
    sql, params = insert_rows_sql(batch)
    orm_sql, orm_params = _compiled_insert([RunEvent(**{f.attname: getattr(row, f.attname) for f in
                                                       RunEvent._meta.concrete_fields}) for row in batch], connection)
    assert sql == orm_sql
    assert same_params(params, orm_params), (params, orm_params)


def test_the_kept_insert_writes_the_rows_in_order(api):
    from tests.helpers.runs import make_run

    run_id = make_run(api)["id"]
    insert_rows_sql(rows(3))  # compiled and kept
    sql, params = insert_rows_sql([RunEvent(run_id=run_id, **values) for values in ROW_VALUES])
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    written = list(RunEvent.objects.filter(pk__in=ids).order_by("pk").values("kind", "data", "frames", "inbox"))
    assert written == [{name: values[name] for name in ("kind", "data", "frames", "inbox")} for values in ROW_VALUES]


def test_a_row_with_an_expression_is_compiled_by_the_orm(db):
    kept_sql, _ = insert_rows_sql(rows(2))
    batch = rows(2)
    batch[1].step_id = Value("from an expression")
    sql, params = insert_rows_sql(batch)
    assert sql != kept_sql and sql == _compiled_insert(batch, connection)[0]
    assert "from an expression" in [param for column in params for param in
                                    (column if type(column) is list else [column])]


def test_a_layout_it_cannot_read_off_the_first_compile_is_never_kept(db, monkeypatch):
    from condor import sql as sql_module

    monkeypatch.setattr(sql_module, "_same_param", lambda a, b: False)  # as if the ORM adapted differently
    insert_rows_sql(rows(5))  # a row count no other test inserts: compiled here first
    compiled, real = [], sql_module._compiled_insert
    monkeypatch.setattr(sql_module, "_compiled_insert",
                        lambda objs, db, **options: compiled.append(objs) or real(objs, db, **options))
    insert_rows_sql(rows(5))
    assert len(compiled) == 1  # compiled again, not laid out by guess


def test_a_large_batch_is_compiled_not_kept(db, monkeypatch):
    from condor import sql as sql_module

    count = sql_module.KEPT_ROWS_AT_MOST + 1
    compiled, real = [], sql_module._compiled_insert
    monkeypatch.setattr(sql_module, "_compiled_insert",
                        lambda objs, db, **options: compiled.append(objs) or real(objs, db, **options))
    insert_rows_sql(rows(count))
    insert_rows_sql(rows(count))
    assert len(compiled) == 2
    assert not any(key[:1] == ("insert-rows",) and key[2] == count for key in connection.condor_kept)
