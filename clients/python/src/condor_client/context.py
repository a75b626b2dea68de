"""The run a ``@gated`` function gates in: set by ``session.run()`` for the code inside its block.

A context variable, so threads and asyncio tasks each see the run they were started in.
"""

from contextvars import ContextVar
from typing import Any

current_run: ContextVar[Any] = ContextVar("condor_current_run", default=None)
