"""A pass split over worker processes (CONDOR_SWEEP_PARTS): each share walks its slice,
and together they close each run once."""

import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from condor import sweeps as sweep_pass
from condor import tasks
from runs.models import Run, RunEvent
from runs.sweep_batches import Share
from tests.helpers.runs import make_run

pytestmark = pytest.mark.usefixtures("catalog")


def make_idle(api, count: int) -> list[str]:
    ids = [make_run(api, "executing")["id"] for _ in range(count)]
    Run.objects.filter(pk__in=ids).update(last_activity_at=timezone.now() - timedelta(hours=1))
    return ids


def test_the_shares_of_a_split_pass_close_each_due_run_once(api):
    runs = make_idle(api, 12)
    upper_half = {pk for pk in runs if uuid.UUID(pk).int >= 2**127}

    second = sweep_pass.sweep_share(Share(1, 2))
    first = sweep_pass.sweep(share=Share(0, 2))

    assert second["runs_idle"] == len(upper_half)  # its slice of the key space, and only that
    assert first["runs_idle"] == len(runs) - len(upper_half)
    assert set(Run.objects.filter(pk__in=runs).values_list("terminal_reason", flat=True)) == {"sweep_idle"}
    closes = Counter(RunEvent.objects.filter(run_id__in=runs, kind="run.closed").values_list("run_id", flat=True))
    assert len(closes) == len(runs) and set(closes.values()) == {1}
    assert "events_republished" not in second  # the rest of the pass runs in the first share only


def test_the_beat_task_hands_the_other_shares_to_other_workers(settings, monkeypatch):
    settings.CONDOR_SWEEP_PARTS = 3
    queued = []
    monkeypatch.setattr(tasks.sweep_part, "apply_async", lambda args, **options: queued.append((args, options)))
    monkeypatch.setattr(tasks, "sweep_once", lambda *, share: share)

    assert tasks.sweep() == Share(0, 3)
    # Each expires like the pass: a queue that fell behind does not run stale shares.
    expires = float(settings.CONDOR_SWEEP_INTERVAL_SECONDS)
    assert queued == [((1, 3), {"expires": expires}), ((2, 3), {"expires": expires})]
