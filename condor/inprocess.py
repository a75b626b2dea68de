"""Sweeps on a daemon thread, for a deployment with no Celery broker (no REDIS_URL: `make run`).

Started by the serving entry points (condor/wsgi.py, condor/asgi.py), never by a management
command: a migrate or a shell must not sweep. Several web processes each sweeping is safe, as
two beats are (runs/sweep.py).
"""

import logging
import threading

from django.conf import settings
from django.db import close_old_connections

from condor.sweeps import sweep

logger = logging.getLogger(__name__)
started = threading.Event()


def _loop(stop: threading.Event) -> None:
    while not stop.wait(settings.CONDOR_SWEEP_INTERVAL_SECONDS):
        try:
            counts = sweep()
            if any(count for name, count in counts.items() if name != "seconds"):
                logger.info("sweep: %s", counts)
        except Exception:
            logger.exception("in-process sweep failed")
        finally:
            close_old_connections()


def start_if_configured() -> threading.Event | None:
    """`start_sweeper` when settings.CONDOR_INPROCESS_SWEEPS says so (by default: no REDIS_URL)."""
    return start_sweeper() if settings.CONDOR_INPROCESS_SWEEPS else None


def start_sweeper() -> threading.Event | None:
    """Start the sweeper thread once per process; returns its stop event."""
    if started.is_set():
        return None
    started.set()
    stop = threading.Event()
    threading.Thread(target=_loop, args=(stop,), name="condor-sweeper", daemon=True).start()
    logger.info("sweeping in-process every %ss", settings.CONDOR_SWEEP_INTERVAL_SECONDS)
    return stop
