"""``@gated("tool.name")``: integrating a tool with Condor is one decorator.

The decorated function's keyword arguments are the tool's args. A call gates
them in the current run (the innermost ``session.run()`` block), runs the
function with what was allowed — a reviewer's edited args, after an edit —
and reports its return value (or its exception, as an error result) to the run.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from condor_client.context import current_run
from condor_client.errors import CondorError


class NoCurrentRun(CondorError):
    code = "no_current_run"


def _run(*, asynchronous: bool):
    from condor_client.aio import AsyncRun

    run = current_run.get()
    if run is None:
        raise NoCurrentRun("A @gated tool was called outside a `with session.run()` block.")
    if isinstance(run, AsyncRun) != asynchronous:
        raise TypeError("An `async def` tool gates in an AsyncCondor run, a plain one in a Condor run.")
    return run


def _only_keywords(name: str, args: tuple) -> None:
    if args:
        raise TypeError(f"{name}: a gated tool takes keyword arguments only (they are the tool's args).")


def _failure(error: Exception) -> dict:
    return {"error": f"{type(error).__name__}: {error}"}


def _rationale_for(rationale: str | Callable[..., str | None] | None, kwargs: dict) -> str | None:
    return rationale(**kwargs) if callable(rationale) else rationale


def gated(
    tool: str,
    *,
    op: str | None = None,
    rationale: str | Callable[..., str | None] | None = None,
    untrusted: bool = False,
    timeout: float | None = None,
):
    """Gate every call of the decorated function as ``tool`` (``op``, if its verb matters).

    ``rationale`` says why the agent wants the call; the reviewer's card shows it. A string,
    or a callable given the call's keyword arguments (the tool's args) that returns one:
    ``rationale=lambda drug, dose_mg, **_: f"{drug} {dose_mg} mg: first-line for CAP"``.
    ``untrusted=True`` reports its results as untrusted (they taint the session).
    Works on plain and ``async def`` functions, inside ``Condor`` and ``AsyncCondor`` runs.
    """

    def decorate(function: Callable) -> Callable:
        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def gated_async(*args, **kwargs) -> Any:
                _only_keywords(function.__name__, args)
                run = _run(asynchronous=True)
                allowed = await run.gate(
                    tool, kwargs, op=op, rationale=_rationale_for(rationale, kwargs), timeout=timeout
                )
                try:
                    result = await function(**allowed)
                except Exception as error:
                    await run.report(allowed.tool_call_id, _failure(error), untrusted, is_error=True)
                    raise
                await run.report(allowed.tool_call_id, result, untrusted)
                return result

            return gated_async

        @functools.wraps(function)
        def gated_sync(*args, **kwargs) -> Any:
            _only_keywords(function.__name__, args)
            run = _run(asynchronous=False)
            allowed = run.gate(tool, kwargs, op=op, rationale=_rationale_for(rationale, kwargs), timeout=timeout)
            try:
                result = function(**allowed)
            except Exception as error:
                run.report(allowed.tool_call_id, _failure(error), untrusted, is_error=True)
                raise
            run.report(allowed.tool_call_id, result, untrusted)
            return result

        return gated_sync

    return decorate
