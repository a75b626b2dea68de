"""How long a test waits for something that must happen before it calls it a hang.

A bound, never a measure of speed: a wait ends as soon as its condition holds, so
this only decides how long a real failure takes to report. Two full suites at once
on the 2-core CI box (load average 15-20) took over 5 s to load a page and push a
frame, so 5 s bounds failed there; 30 s is reached only by something stuck.
"""

import time

HANG_SECONDS = 30
HANG_MS = HANG_SECONDS * 1000


def wait_for(predicate, timeout: float, what: str, details=lambda: "", interval: float = 0.1):
    """Poll `predicate` until it returns something truthy; fail with `what` (and `details()`) after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{details()}")
        time.sleep(interval)
