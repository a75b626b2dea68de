"""How long a test waits for something that must happen before it calls it a hang.

A bound, never a measure of speed: a wait ends as soon as its condition holds, so
this only decides how long a real failure takes to report. Two full suites at once
on the 2-core CI box (load average 15-20) took over 5 s to load a page and push a
frame, so 5 s bounds failed there; 30 s is reached only by something stuck.
"""

HANG_SECONDS = 30
HANG_MS = HANG_SECONDS * 1000
