"""The orphaned-suspend sweep re-checks "no open approval" after it holds the run (SPEC section 6).

A statement's subqueries read the rows as they were when it began. The batch's locking
SELECT may wait (here: on an advisory lock its due condition is made to take) while a
gate call parks a new approval on the run and commits; PostgreSQL then re-checks the
locked run's own columns, but the approvals subquery still answers from before the
wait. A run that has just been handed a fresh card must not be aborted as
`approval_expired`, nor its new card expired with it.
"""

import threading
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.utils import timezone

from approvals import expiry
from approvals.expiry import expire_due
from approvals.models import Approval
from runs import sweep_batches
from runs.models import Run
from tests.helpers.approval_loop import park
from tests.helpers.races import backend_pid, wait_until_queued
from tests.helpers.runs import make_run, stored_state

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.usefixtures("catalog")]

GATE_KEY = 72_411  # the advisory lock the sweep's due condition takes (shared) in this test only
WAITS_ON_GATE = "(SELECT 1 FROM pg_advisory_xact_lock_shared(%s)) = 1"


def orphaned_run(api) -> str:
    """A suspended run whose only approval has expired: due for `approval_expired`."""
    run_id = make_run(api, "suspended")["id"]
    Approval.objects.filter(run_id=run_id).update(expires_at=timezone.now())
    assert expire_due() == 1
    return run_id


def test_a_run_given_a_new_card_while_the_batch_waits_for_its_lock_stays_parked(api, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("the race needs PostgreSQL's row locks and statement snapshots")
    run_id = orphaned_run(api)
    # The sweep's due rows, made to wait on GATE_KEY inside each statement that reads them.
    monkeypatch.setattr(
        expiry,
        "Run",
        SimpleNamespace(
            objects=SimpleNamespace(
                filter=lambda *args, **kwargs: Run.objects.filter(*args, **kwargs).extra(
                    where=[WAITS_ON_GATE], params=[GATE_KEY]
                )
            )
        ),
    )
    ids_read, gate_held, release = threading.Event(), threading.Event(), threading.Event()
    real_guarded = sweep_batches.close_guarded

    def lock_once_the_gate_is_held(close_batch, ids, what):
        ids_read.set()  # the candidates were read as due; the batch's lock comes next
        assert gate_held.wait(timeout=60)
        return real_guarded(close_batch, ids, what)

    monkeypatch.setattr(sweep_batches, "close_guarded", lock_once_the_gate_is_held)
    sweep_pid, closed = [], []

    def sweep_pass():
        try:
            sweep_pid.append(backend_pid())
            closed.append(expiry.abort_orphaned_suspends())
        finally:
            connection.close()

    def hold_the_gate():
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [GATE_KEY])
                gate_held.set()
                release.wait(timeout=60)
        finally:
            connection.close()

    sweeper, holder = threading.Thread(target=sweep_pass), threading.Thread(target=hold_the_gate)
    sweeper.start()
    try:
        assert ids_read.wait(timeout=60), "the pass never read its candidates"
        holder.start()
        wait_until_queued(lambda: sweep_pid[0])  # the batch's locking statement waits
        # The agent parks another call on the run while the batch's statement waits.
        card = park(api, run_id)
    finally:
        release.set()
        holder.join(timeout=60)
        sweeper.join(timeout=60)
    assert not sweeper.is_alive() and not holder.is_alive()

    assert closed == [0]
    assert stored_state(run_id) == "suspended"
    assert Approval.objects.get(pk=card["id"]).status == "pending"
