"""Condor's settings with the statement counter in front (bench_statements.py); a bench's servers only.

Imported by name from this directory (bench/compare.py puts it on PYTHONPATH), never as
`bench.server`: the server runs from another checkout, whose own bench/ may not have it.
"""

from condor.settings import *  # noqa: F403
from condor.settings import MIDDLEWARE

# Outermost, so it counts what every other middleware sends too (a reviewer's session read).
MIDDLEWARE = ["bench_statements.CountStatements", *MIDDLEWARE]
