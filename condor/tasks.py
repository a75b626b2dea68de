from celery import shared_task
from django.conf import settings

from condor.sweeps import sweep as sweep_once
from condor.sweeps import sweep_share
from runs.sweep_batches import Share


@shared_task(name="condor.sweep", ignore_result=True)
def sweep():
    """The periodic sweep, scheduled by Celery beat (CELERY_BEAT_SCHEDULE).

    With CONDOR_SWEEP_PARTS > 1 the pass is split: the other slices of the backlog go
    to other worker processes as `condor.sweep_share` tasks, and this one takes the
    first. They expire like the pass, so a queue that fell behind never runs stale ones.
    """
    parts = settings.CONDOR_SWEEP_PARTS
    for part in range(1, parts):
        sweep_part.apply_async((part, parts), expires=float(settings.CONDOR_SWEEP_INTERVAL_SECONDS))
    return sweep_once(share=Share(0, parts))


@shared_task(name="condor.sweep_share", ignore_result=True)
def sweep_part(part: int, parts: int):
    """Slice `part` of `parts` of a split pass's backlog (see `sweep`)."""
    return sweep_share(Share(part, parts))
