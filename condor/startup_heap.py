"""Keep the garbage collector off what a server process loads at start: the one GC setting, applied
by the entry points (condor/wsgi.py, condor/asgi.py) once the application is loaded.

Why: a full collection walks every object the collector tracks, and a loaded Condor process
tracks ~137,000 of them (modules, classes, URL patterns, settings, schema) that live as long as
the process does. Measured with gc.callbacks (bench/README.md, "Sessions surface"): each full
collection cost ~150 ms of CPU on the bench machine, and requests that allocate a lot (the
history of a long session) set one off every ~60 requests: that was the history's p99, several
times its p50. `gc.freeze()` moves what is loaded into a permanent generation that collections
skip; a full collection then walks only what the process made since (~20,000 objects, ~15 ms).

What it costs: a frozen object that later becomes cyclic garbage is never collected. What is
loaded at start is meant to live as long as the process, so that is at most the start-up heap
(freed by reference counting otherwise, as before). The collector's thresholds stay Python's.
"""

import gc


def freeze_startup_heap() -> None:
    """Call once, after the application is loaded and before the first request."""
    from django.urls import get_resolver

    # Import every view, serializer and schema module now (the URLconf imports them on the first
    # request otherwise), so they are frozen with the rest.
    get_resolver().url_patterns
    gc.collect()  # what start-up already threw away is freed, not frozen
    gc.freeze()
