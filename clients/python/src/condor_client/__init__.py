"""Condor's Python client: ask Condor before every tool call, wait for the human, run what was approved.

from condor_client import Condor, gated

condor = Condor("http://127.0.0.1:8000", api_key)
with condor.session(patient_ref="MRN-7").run() as run:
    args = run.gate("prescribe_medication", {"drug": "amoxicillin"}, op="create")
"""

from condor_client.aio import AsyncCondor, AsyncRun, AsyncSession
from condor_client.client import Condor, Run, Session
from condor_client.context import current_run
from condor_client.errors import (
    Blocked,
    CondorError,
    ConnectionFailed,
    Denied,
    Expired,
    RunEnded,
    TimedOut,
    Withdrawn,
)
from condor_client.gated import NoCurrentRun, gated
from condor_client.protocol import Allowed, Parked

__all__ = [
    "Allowed",
    "AsyncCondor",
    "AsyncRun",
    "AsyncSession",
    "Blocked",
    "Condor",
    "CondorError",
    "ConnectionFailed",
    "Denied",
    "Expired",
    "NoCurrentRun",
    "Parked",
    "Run",
    "RunEnded",
    "Session",
    "TimedOut",
    "Withdrawn",
    "current_run",
    "gated",
]
__version__ = "0.1.0"
