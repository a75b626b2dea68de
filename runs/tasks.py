from celery import shared_task

from runs.sweep import sweep as sweep_once


@shared_task(name="condor.sweep", ignore_result=True)
def sweep():
    """The periodic sweep, scheduled by Celery beat (CELERY_BEAT_SCHEDULE)."""
    return sweep_once()
