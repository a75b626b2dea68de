"""Sweeps on a daemon thread, for a single-process deployment with no Celery broker (`make run`)."""

import logging
import threading

from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger(__name__)
_started = threading.Event()


def _loop(stop: threading.Event) -> None:
    from runs.sweep import sweep

    while not stop.wait(settings.CONDOR_SWEEP_INTERVAL_SECONDS):
        try:
            counts = sweep()
            if any(count for name, count in counts.items() if name != "seconds"):
                logger.info("sweep: %s", counts)
        except Exception:
            logger.exception("in-process sweep failed")
        finally:
            close_old_connections()


def start_sweeper() -> threading.Event | None:
    """Start the sweeper thread once per process; returns its stop event."""
    if _started.is_set():
        return None
    _started.set()
    stop = threading.Event()
    threading.Thread(target=_loop, args=(stop,), name="condor-sweeper", daemon=True).start()
    logger.info("sweeping in-process every %ss", settings.CONDOR_SWEEP_INTERVAL_SECONDS)
    return stop
