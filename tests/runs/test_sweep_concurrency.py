"""Two sweep passes at once on real PostgreSQL (SPEC section 6): every due run closed exactly once.

Each pass runs in its own thread with its own connection. Pass A is held inside its
first batch, its runs locked, while pass B walks the whole backlog: B must pass over
A's locked batch (SKIP LOCKED) instead of waiting on it or closing it a second time.
"""

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from audit import chain as audit_chain
from audit.models import AuditEvent
from runs import spine
from runs import sweep as sweeps
from runs.models import Run, RunEvent
from tests.helpers.runs import make_run

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.usefixtures("catalog")]

RUNS = 12
BATCH = 3


def test_two_passes_at_once_close_each_run_exactly_once(api, settings, monkeypatch):
    settings.CONDOR_SWEEP_BATCH_SIZE = BATCH
    runs = [make_run(api, "executing")["id"] for _ in range(RUNS)]
    Run.objects.filter(pk__in=runs).update(last_activity_at=timezone.now() - timedelta(hours=1))
    holding, b_done = threading.Event(), threading.Event()
    real_close = spine.close_locked

    def close_holding_the_first_batch(batch, reason, **options):
        if threading.current_thread().name == "pass-a" and not holding.is_set():
            holding.set()  # A's first batch is locked now
            b_done.wait(timeout=60)
        return real_close(batch, reason, **options)

    monkeypatch.setattr(spine, "close_locked", close_holding_the_first_batch)
    closed: dict[str, int] = {}

    def one_pass(name: str):
        try:
            closed[name] = sweeps.abort_idle_runs(timezone.now())
        finally:
            connection.close()

    pass_a = threading.Thread(target=one_pass, args=("a",), name="pass-a")
    pass_a.start()
    assert holding.wait(timeout=60), "pass A never reached its first batch"
    pass_b = threading.Thread(target=one_pass, args=("b",), name="pass-b")
    pass_b.start()
    pass_b.join(timeout=60)
    b_done.set()
    pass_a.join(timeout=60)
    assert not pass_a.is_alive() and not pass_b.is_alive(), "a pass never returned"

    assert closed == {"a": BATCH, "b": RUNS - BATCH}  # B passed over A's locked batch and took the rest
    assert set(Run.objects.filter(pk__in=runs).values_list("terminal_reason", flat=True)) == {"sweep_idle"}
    closes = Counter(RunEvent.objects.filter(run_id__in=runs, kind="run.closed").values_list("run_id", flat=True))
    audited = Counter(AuditEvent.objects.filter(run_id__in=runs, kind="run_close").values_list("run_id", flat=True))
    assert len(closes) == len(audited) == RUNS
    assert set(closes.values()) == set(audited.values()) == {1}
    assert audit_chain.verify().intact
