"""The garbage collector's settings for a server process, in one place: applied by the entry points
(condor/wsgi.py, condor/asgi.py) once the application is loaded.

Why: a full collection walks every object the collector tracks, and a loaded Condor process
tracks well over a hundred thousand of them (modules, classes, URL patterns, settings, schema)
that live as long as the process does, so each full collection costs a request a visible pause.
A request sets one off when the objects alive during its young collections get pushed on into
the oldest generation, a few thousand at a time; DRF's list views leave cyclic garbage (the
view, request and serializer objects hold one another) that only a collection frees.
`gc.freeze()` moves what is loaded into a permanent generation that collections skip; a full
collection then walks only what the process made since and the cyclic garbage waiting.

Second, the youngest generation is collected after 5,000 net allocations instead of 700. A
request that allocates a few thousand containers that die with it (by reference counting) ran
the collector several times at 700, which moved what was alive into the older generations, and
so set off the full collections above every few dozen requests; a much larger threshold was no
better (each young collection then walks more). `bench/sessions.py --no-freeze` measures it.

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
