"""condor/bulk.insert_all (COPY on PostgreSQL) writes what bulk_create would, and `__any` finds what `__in` does."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.models import Run, RunEvent
from tests.helpers.runs import make_run

pytestmark = pytest.mark.usefixtures("catalog")


def _stored(events):
    return [(event.kind, event.data, event.frames, event.inbox, event.created_at is not None)
            for event in RunEvent.objects.filter(pk__in=[event.pk for event in events]).order_by("id")]


def _events(run_id):
    # `inbox` None is SQL NULL, a dict is JSON; `data` with text a COPY line must escape.
    return [RunEvent(run_id=run_id, kind="bulk.a", data={"text": "tab\there\nnew line \\ back"}, frames=[{"n": 1}]),
            RunEvent(run_id=run_id, kind="bulk.b", data={}, frames=[], inbox={"type": "card.removed", "id": "x"}),
            RunEvent(run_id=run_id, kind="bulk.c", data={"é": [1, None, True]}, frames=[], inbox=None)]


def test_a_copy_writes_the_rows_bulk_create_writes(api):
    from condor.bulk import insert_all

    run_id = make_run(api, "executing")["id"]
    copied, created = _events(run_id), _events(run_id)

    with CaptureQueriesContext(connection) as queries:
        insert_all(copied, ids=True)
    RunEvent.objects.bulk_create(created)

    assert _stored(copied) == _stored(created)
    assert [event.pk for event in copied] == sorted(event.pk for event in copied)  # ids in list order
    assert RunEvent.objects.filter(kind="bulk.c", inbox__isnull=True).count() == 2  # SQL NULL, not JSON null
    # The COPY is counted with the statements around it (the pinned statement counts see it).
    expected = 2 if connection.vendor == "postgresql" else 1
    assert len(queries) == expected


def test_any_finds_what_in_finds(api):
    runs = [make_run(api, "executing")["id"] for _ in range(3)]
    wanted = runs[:2]

    assert set(Run.objects.filter(pk__any=wanted)) == set(Run.objects.filter(pk__in=wanted))
    assert set(RunEvent.objects.filter(run_id__any=wanted)) == set(RunEvent.objects.filter(run_id__in=wanted))
    assert not Run.objects.filter(pk__any=[]).exists()
