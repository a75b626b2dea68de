"""core/rows.py: plain statements from `Model._meta` write and read what the ORM writes and reads;
`__any` finds what `__in` does."""

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import ApiClient
from approvals.models import Approval
from core.rows import (
    Write,
    column,
    columns,
    db_value,
    first_row,
    insert_if_sql,
    insert_rows_sql,
    insert_sql,
    instance,
    reader,
    run_together,
    save_write,
    table,
    update_sql,
)
from runs.models import Run, RunEvent
from sessions_app.models import Session
from tests.helpers.approval_loop import approve, parked_run
from tests.helpers.personas import agent
from tests.helpers.rows import models_read_by_reader, unlike_the_orm
from tests.helpers.runs import make_run

pytestmark = pytest.mark.usefixtures("catalog")


def _events(run_id):
    # `inbox` None is SQL NULL, a dict is JSON; text, non-ASCII and nested JSON values.
    return [
        RunEvent(run_id=run_id, kind="rows.a", data={"text": "tab\there\nnew line \\ back"}, frames=[{"n": 1}]),
        RunEvent(run_id=run_id, kind="rows.b", data={}, frames=[], inbox={"type": "card.removed", "id": "x"}),
        RunEvent(run_id=run_id, kind="rows.c", data={"é": [1, None, True]}, frames=[], inbox=None),
    ]


def _stored(events):
    return [
        (event.kind, event.data, event.frames, event.inbox, event.created_at is not None)
        for event in RunEvent.objects.filter(pk__in=[event.pk for event in events]).order_by("id")
    ]


def _inserted(objs) -> list:
    ids = []
    run_together([Write(*insert_rows_sql(objs), done=ids.extend)])
    return ids


def test_an_insert_of_several_rows_writes_what_bulk_create_writes(api):
    run_id = make_run(api, "executing")["id"]
    mine, created = _events(run_id), _events(run_id)

    ids = _inserted(mine)
    RunEvent.objects.bulk_create(created)

    for event, pk in zip(mine, sorted(ids), strict=True):
        event.pk = pk
    assert _stored(mine) == _stored(created)
    assert RunEvent.objects.filter(kind="rows.c", inbox__isnull=True).count() == 2  # SQL NULL, not JSON null


def test_one_rows_insert_returns_its_pk(api):
    run_id = make_run(api, "executing")["id"]
    (event,) = _events(run_id)[:1]
    ids = []
    run_together([Write(*insert_sql(event), done=ids.extend)])
    assert RunEvent.objects.get(pk=ids[0]).kind == "rows.a"


def test_a_conditional_insert_inserts_only_while_its_condition_holds(api):
    run_id = make_run(api, "executing")["id"]
    table = connection.ops.quote_name(RunEvent._meta.db_table)
    kind = connection.ops.quote_name(RunEvent._meta.get_field("kind").column)
    condition = (f"NOT EXISTS (SELECT 1 FROM {table} WHERE {kind} = %s)", ["rows.a"])

    first, second = [], []
    run_together([Write(*insert_if_sql(_events(run_id)[0], condition), done=first.extend)])
    run_together([Write(*insert_if_sql(_events(run_id)[0], condition), done=second.extend)])

    assert len(first) == 1 and second == []
    assert RunEvent.objects.filter(kind="rows.a").count() == 1


def test_an_update_writes_its_values_and_a_save_write_every_column(api):
    run_id = make_run(api, "executing")["id"]
    event = RunEvent.objects.bulk_create(_events(run_id)[:1])[0]

    run_together([Write(*update_sql(RunEvent, event.pk, data={"after": [1, 2]}, inbox=None))])
    event.refresh_from_db()
    assert (event.data, event.inbox) == ({"after": [1, 2]}, None)

    event.kind, event.frames = "rows.saved", [{"type": "text"}]
    run_together([save_write(event)])
    event.refresh_from_db()
    assert (event.kind, event.frames, event.data) == ("rows.saved", [{"type": "text"}], {"after": [1, 2]})


def test_a_row_read_by_its_columns_is_the_instance_the_orm_reads(api):
    run_id = make_run(api, "executing")["id"]
    pk = db_value(Run, "id", Run.objects.get(pk=run_id).pk)
    table = connection.ops.quote_name(Run._meta.db_table)
    column = connection.ops.quote_name(Run._meta.pk.column)

    row = first_row(f"SELECT {columns(Run)} FROM {table} WHERE {column} = %s", [pk])  # a raw parameter matches
    read, orm = reader(Run)(row), Run.objects.get(pk=run_id)

    assert [getattr(read, field.attname) for field in Run._meta.concrete_fields] == [
        getattr(orm, field.attname) for field in Run._meta.concrete_fields
    ]


def test_every_model_read_by_its_columns_is_the_instance_the_orm_loads(
    api, ward_agent, parked, rita, carl, reviewer_http
):
    # Rows of every model a hot path reads with `reader`, with NULLs and without: a pending card (no
    # decider, claim or resume data) and an approved one (an integer key to its decider, nested and
    # non-ASCII JSON), a run suspended and one closed, a session with consent and deleted, a client
    # that cannot park, a reviewer signed in and one who never was.
    run_id, pending = parked
    closed_run, decided = parked_run(api)
    approve(reviewer_http, decided["id"])
    at = datetime.datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=datetime.UTC)
    Approval.objects.filter(pk=decided["id"]).update(
        approved_args={"drug": "amoxicilline", "note": "naïve café ✓ 日本", "nested": {"deep": [1, 2.5, None, True]}},
        resume_data=[{"k": []}, "ü", 0, False, None],
        escalated_at=at,
    )
    Run.objects.filter(pk=closed_run).update(usage={"tokens": {"in": 12, "out": 3}, "tools": ["a", "ß"]}, closed_at=at)
    gone = Run.objects.get(pk=closed_run).session_id
    Session.objects.filter(pk=gone).update(consent=True, deleted_at=timezone.now())
    parkless = agent("parkless-agent", can_park=False)

    rows = [
        (Run, run_id),
        (Run, closed_run),
        (Session, Run.objects.get(pk=run_id).session_id),
        (Session, gone),
        (ApiClient, ward_agent.pk),
        (ApiClient, parkless.pk),
        (Approval, pending["id"]),
        (Approval, decided["id"]),
        (get_user_model(), rita.pk),
        (get_user_model(), carl.pk),
    ]

    assert {model for model, _ in rows} == set(models_read_by_reader())
    assert get_user_model().objects.get(pk=rita.pk).last_login is not None  # signed in: an aware datetime
    assert Approval.objects.get(pk=decided["id"]).decided_by_id == rita.pk
    for model, pk in rows:
        assert unlike_the_orm(model, pk) == [], (model.__name__, pk)


def test_writes_run_together_hand_each_its_own_returning_in_one_statement(api):
    run_id = make_run(api, "executing")["id"]
    a, b = [], []
    with CaptureQueriesContext(connection) as queries:
        run_together(
            [
                Write(*insert_rows_sql(_events(run_id)[:2]), done=a.extend),
                Write(*insert_sql(_events(run_id)[2]), done=b.extend),
            ]
        )
    assert len(a) == 2 and len(b) == 1
    assert len(queries) == (1 if connection.vendor == "postgresql" else 2)


def test_names_come_from_the_models_meta():
    quote = connection.ops.quote_name
    assert table(Run) == quote(Run._meta.db_table)
    assert column(Run, "session") == column(Run, "session_id") == quote(Run._meta.get_field("session").column)
    assert column(Run, "state", "r") == f"r.{quote('state')}"


def test_an_instance_by_position_refuses_a_name_that_is_no_field():
    assert instance(RunEvent, kind="x", step_id="s").kind == "x"
    with pytest.raises(TypeError):
        instance(RunEvent, run="not an attname")


def test_any_finds_what_in_finds(api):
    runs = [make_run(api, "executing")["id"] for _ in range(3)]
    wanted = runs[:2]

    assert set(Run.objects.filter(pk__any=wanted)) == set(Run.objects.filter(pk__in=wanted))
    assert set(RunEvent.objects.filter(run_id__any=wanted)) == set(RunEvent.objects.filter(run_id__in=wanted))
    assert not Run.objects.filter(pk__any=[]).exists()
