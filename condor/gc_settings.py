"""The garbage collector's settings for a server process, in one place: applied by the entry points
(condor/wsgi.py, condor/asgi.py) once the application is loaded.

Why: a full collection walks every object the collector tracks, and a loaded Condor process
tracks ~137,000 of them (modules, classes, URL patterns, settings, schema) that live as long as
the process does. Measured with gc.callbacks (bench/README.md, "Sessions surface"): each full
collection cost ~150 ms of CPU on the bench machine. A request sets one off when the objects alive
during its young collections get pushed on into the oldest generation, a few thousand at a time.
That was first the history of a long session (every 15–35 requests: its p99, several times its
p50); it no longer is, since the history is built one run at a time and holds no more than one
run's parsed frames (bench/README.md, "#12": at Python's settings, no full collection in 200 of
its requests, 6 young ones). What still sets them off is DRF's cyclic garbage: the list views'
view, request and serializer objects hold one another, ~630 objects a request that only a
collection frees (at Python's settings, 1–2 full collections of 150–180 ms in 200 list requests).
`gc.freeze()` moves what is loaded into a permanent generation that collections skip; a full
collection then walks only what the process made since (~6,000 live objects here) and the cyclic
garbage waiting: in the bench at load 16, 40–57 ms of CPU each, against 180–217 ms without the freeze.

Second, the youngest generation is collected after 5,000 net allocations instead of 700. A
request that allocates a few thousand containers that die with it (by reference counting) ran
the collector several times at 700, which moved what was alive into the older generations, and
so set off the full collections above every few dozen requests. Measured in the same bench when
the history still held the whole session (200 requests a path, load 16): full collections in
history requests 6 → 1, the history's CPU p99/p50 3.6 → 3.1, the lists' 4.7–6.1 → 1.6–1.7
(5 full collections → 0); 20,000 was no better than 5,000 (each young collection then walks more).

What it costs: a frozen object that later becomes cyclic garbage is never collected. What is
loaded at start is meant to live as long as the process, so that is at most the start-up heap
(freed by reference counting otherwise, as before). Cyclic garbage waits a few thousand more
allocations before the collector frees it: kilobytes.
"""

import gc

YOUNGEST_THRESHOLD = 5_000  # Python's default is 700


def configure_gc_for_serving() -> None:
    """Call once, after the application is loaded and before the first request."""
    from django.urls import get_resolver

    # Import every view, serializer and schema module now (the URLconf imports them on the first
    # request otherwise), so they are frozen with the rest.
    get_resolver().url_patterns  # noqa: B018 (the access is the point: it imports the URLconf)
    gc.collect()  # what start-up already threw away is freed, not frozen
    gc.freeze()
    gc.set_threshold(YOUNGEST_THRESHOLD, *gc.get_threshold()[1:])
