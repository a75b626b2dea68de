"""Run telemetry: one dispatch row per run, and the per-flow split over them.

`record_dispatches` runs inside the close's transaction but in a savepoint that
swallows any failure: a lost telemetry row is a gap in a chart, a failed close
would be a run that never ends. OpenTelemetry spans are core/tracing.py's.
"""

import logging
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.db.models import Count, Sum

from core.rows import instance
from runs.models import RunDispatch

logger = logging.getLogger(__name__)

# The close body's `usage` is the agent's; these are the names read from it
# (ours first, then the AI SDK's LanguageModelUsage spelling).
_INPUT = ("input_tokens", "inputTokens", "prompt_tokens")
_OUTPUT = ("output_tokens", "outputTokens", "completion_tokens")
_COST = ("cost", "cost_usd")


def _first(usage: dict, names) -> object:
    return next((usage[name] for name in names if name in usage), None)


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _money(value) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return Decimal(0)
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return Decimal(0)
    return amount if amount.is_finite() and Decimal(0) <= amount < Decimal(10) ** 8 else Decimal(0)


def dispatch_fields(run) -> dict:
    """What a closed run's telemetry row says, read leniently from the agent's `usage`.

    `run`: a Run, or the ClosingRun a sweep batch closes (runs/closing.py).
    """
    usage = run.usage if isinstance(run.usage, dict) else {}
    latency = (run.closed_at - run.created_at).total_seconds() * 1000 if run.closed_at and run.created_at else 0
    return {
        "session_id": run.session_id,
        "engine": run.engine,
        "flow_key": run.flow_key,
        "model": str(usage.get("model") or "")[:120],
        "input_tokens": _count(_first(usage, _INPUT)),
        "output_tokens": _count(_first(usage, _OUTPUT)),
        "cost": _money(_first(usage, _COST)),
        "latency_ms": max(int(latency), 0),
        "outcome": str(run.terminal_reason),
        "state": str(run.state),
        "recorded_at": run.closed_at,
    }


def record_dispatches(runs: list) -> bool:
    """Write the closed runs' dispatch rows at once; never raises. Returns whether they were written."""
    try:
        with transaction.atomic():  # a savepoint: a failure here leaves the close intact
            RunDispatch.objects.bulk_create(
                [instance(RunDispatch, run_id=run.pk, **dispatch_fields(run)) for run in runs]
            )
        return True
    except Exception:
        logger.warning("telemetry: no dispatch rows for %d runs (%s, ...)", len(runs), runs[0].pk, exc_info=True)
        return False


def split_by_flow_key(*, since=None, until=None) -> list[dict]:
    """Runs, tokens and cost per (flow_key, engine), busiest first: the evidence for a per-flow cut-over."""
    rows = RunDispatch.objects.all()
    if since is not None:
        rows = rows.filter(recorded_at__gte=since)
    if until is not None:
        rows = rows.filter(recorded_at__lt=until)
    return list(
        rows.values("flow_key", "engine")
        .annotate(
            runs=Count("pk"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"), cost=Sum("cost")
        )
        .order_by("-runs", "flow_key", "engine")
    )
