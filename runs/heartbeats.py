"""Heartbeats: when a periodic job last finished, for the admin dashboard.

Best effort on purpose: a heartbeat is a hint for people, not a record anyone relies
on, so failing to write one is logged and never fails the job that beat.
"""

import logging

from django.db import DatabaseError, transaction
from django.utils import timezone

from runs.models import Heartbeat

logger = logging.getLogger(__name__)

SWEEP = "sweep"


def beat(name: str, details: dict | None = None) -> None:
    """Record that the job `name` just finished, with a small JSON summary."""
    try:
        with transaction.atomic():
            Heartbeat.objects.update_or_create(name=name, defaults={"at": timezone.now(), "details": details or {}})
    except DatabaseError:
        logger.exception("could not record the %s heartbeat", name)


def last(name: str) -> Heartbeat | None:
    return Heartbeat.objects.filter(name=name).first()
