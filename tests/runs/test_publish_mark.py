"""The outbox's published mark (runs/publish.py mark_published).

On PostgreSQL, in autocommit, it is one statement whose own commit does not wait for
its WAL flush (a lost mark only means the drainer pushes that event again); the
connection's setting is untouched afterwards, and inside someone else's transaction
the mark is a plain UPDATE, so that transaction's commit stays synchronous.
"""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from runs.models import RunEvent
from runs.publish import mark_published
from tests.helpers.runs import make_run

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


@pytest.fixture
def unpublished(api):
    if connection.vendor != "postgresql":
        pytest.skip("synchronous_commit is PostgreSQL's")
    run = make_run(api, "pending")
    RunEvent.objects.filter(run_id=run["id"]).update(published_at=None)
    return list(RunEvent.objects.filter(run_id=run["id"]).values_list("pk", flat=True))


def test_the_mark_is_one_statement_and_leaves_the_connection_synchronous(unpublished):
    with CaptureQueriesContext(connection) as queries:
        mark_published(unpublished)
    assert len(queries.captured_queries) == 1
    assert "set_config('synchronous_commit', 'off', true)" in queries.captured_queries[0]["sql"]
    assert not RunEvent.objects.filter(pk__in=unpublished, published_at__isnull=True).exists()
    assert synchronous_commit() == "on"


def test_inside_a_transaction_the_mark_does_not_relax_its_commit(unpublished):
    with transaction.atomic():
        mark_published(unpublished)
        assert synchronous_commit() == "on"
    assert not RunEvent.objects.filter(pk__in=unpublished, published_at__isnull=True).exists()


def test_a_mark_never_moves_an_existing_one(unpublished):
    mark_published(unpublished)
    first = dict(RunEvent.objects.filter(pk__in=unpublished).values_list("pk", "published_at"))
    mark_published(unpublished)
    assert dict(RunEvent.objects.filter(pk__in=unpublished).values_list("pk", "published_at")) == first
