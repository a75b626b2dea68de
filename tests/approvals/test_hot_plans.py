"""The hot statements are planned once per connection, not on every request (issue 11).

psycopg prepares a statement a connection has run five times (condor/database_settings.py),
and PostgreSQL then makes five plans for the values at hand before it tries one plan for any
values (its generic plan). It keeps that one only while it is expected to cost no more than
the others did; otherwise it plans the statement afresh on every execution, which cost a
resume and a suspend a large share of the database's CPU each. A WHERE whose estimate depends on a value did that: a status compared with a parameter,
"expires after now", `= ANY(array)`, a run's id where some runs have many more cards than
others. Checked on a database whose statistics make those estimates differ (each test fails on
the statements as they were before).
"""

import uuid
from datetime import timedelta

import pytest
from django.db import connection, models
from django.utils import timezone

from approvals.models import Approval, ApprovalStatus
from core.rows import instance
from runs.models import RunEvent
from runs.publish import mark_published
from runs.states import RunState
from tests.helpers.approval_loop import approve, park, resume, suspend
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

EXECUTIONS = 14  # the driver's 5 before it prepares, PostgreSQL's 5 custom plans after that, and some more
ENCOUNTERS = 300  # past sessions, each with a closed run, five events and two cards left past their deadline
LONG_RUNS, LONG_RUN_CARDS = 5, 3000


def insert_all(objs: list) -> list:
    return type(objs[0]).objects.bulk_create(objs, batch_size=1000)


def copies(template, count: int, **changes) -> list:
    """`count` unsaved copies of the model instance `template`, each with a new id and `changes[name](n)`."""
    model = type(template)
    values = {field.attname: getattr(template, field.attname) for field in model._meta.concrete_fields}
    # Made with every value at once: a run's state (django-fsm) cannot be set after that.
    new_id = uuid.uuid4 if isinstance(model._meta.pk, models.UUIDField) else lambda: None  # None: the database's
    return [
        instance(
            model, **{**values, model._meta.pk.attname: new_id(), **{name: value(n) for name, value in changes.items()}}
        )
        for n in range(count)
    ]


@pytest.fixture
def analyzed_history(api, reviewer_http, catalog):
    """A client's history as a long-lived deployment has it, with fresh statistics: past sessions,
    each with a closed run, its events and two cards left pending or approved past their deadline
    (as before a sweep); a few long runs that parked thousands; runs with cards pending, approved
    and consumed. Then a new connection, so that a test counts its own statement's plans."""
    if connection.vendor != "postgresql":
        pytest.skip("plans are PostgreSQL's")
    for _ in range(2):
        run_id = open_executing_run(api)
        cards = [park(api, run_id) for _ in range(4)]
        for card in cards[:3]:
            approve(reviewer_http, card["id"])
        assert resume(api, run_id, cards[0]["id"]).status_code == 200
    card = Approval.objects.select_related("run", "session").first()
    sessions = insert_all(copies(card.session, ENCOUNTERS))
    runs = insert_all(
        copies(
            card.run,
            ENCOUNTERS,
            session_id=lambda n: sessions[n].pk,
            state=lambda n: RunState.COMPLETED,
            terminal_reason=lambda n: "completed",
            closed_at=lambda n: card.requested_at,
        )
    )
    long_ago = timezone.now() - timedelta(days=30)
    # Two cards a past encounter, and a few long runs that parked many.
    owners = [runs[n // 2] for n in range(2 * ENCOUNTERS)] + [runs[n % LONG_RUNS] for n in range(LONG_RUN_CARDS)]
    insert_all(
        copies(
            card,
            len(owners),
            run_id=lambda n: owners[n].pk,
            session_id=lambda n: owners[n].session_id,
            step_id=lambda n: f"history-{n}",
            status=lambda n: ApprovalStatus.APPROVED if n % 2 else ApprovalStatus.PENDING,
            expires_at=lambda n: long_ago + timedelta(minutes=n),
        )
    )
    event = RunEvent.objects.first()
    insert_all(copies(event, 5 * ENCOUNTERS, run_id=lambda n: runs[n // 5].pk))
    with connection.cursor() as cursor:
        for table in ("sessions_app_session", "runs_run", "approvals_approval", "runs_runevent"):
            cursor.execute(f"ANALYZE {table}")
    # Back to the pool, and the pool closed: the next statement runs on a new connection.
    connection.close()
    connection.close_pool()


def plans(fragment: str) -> tuple[int, int]:
    """(generic, custom) plans made so far on this connection for the prepared statement containing `fragment`."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE NOT from_sql AND strpos(statement, %s) > 0",
            [fragment],
        )
        found = cursor.fetchall()
    assert len(found) == 1, (fragment, found)
    return found[0]


def assert_planned_once(fragment: str) -> None:
    generic, custom = plans(fragment)
    assert generic > 0 and custom <= 5, f"{custom} custom plans, {generic} generic, for {fragment!r}"


def test_a_suspend_reads_the_approvals_it_asks_about_on_one_plan(analyzed_history, api):
    for _ in range(EXECUTIONS):
        suspend(api, open_executing_run(api))
    assert_planned_once('"approvals_approval"."contract_hash" = $')


def test_a_resume_consumes_on_one_plan(analyzed_history, api, reviewer_http):
    for _ in range(EXECUTIONS):
        run_id = open_executing_run(api)
        card = suspend(api, run_id)
        approve(reviewer_http, card["id"])
        assert resume(api, run_id, card["id"]).status_code == 200
    assert_planned_once("WITH consumed AS (UPDATE")


def test_the_published_mark_runs_on_one_plan(analyzed_history):
    events = list(RunEvent.objects.order_by("id").values_list("pk", flat=True))
    RunEvent.objects.update(published_at=None)
    for n in range(EXECUTIONS):
        mark_published(events[n : n + 1 + n % 3])  # one event a mark or several, as rounds come
    assert_planned_once('UPDATE "runs_runevent" SET "published_at"')
