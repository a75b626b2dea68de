"""What a reviewer needs to judge a card beyond the call itself: why the agent asked,
and the session it asked in.

The gated call's `metadata.rationale` (stored by the gate in the ToolCall ledger), the
run's autonomy (the gate decides on the run's, not the session's default), and for a
tainted session the result that tainted it: taint is monotone and only a reported
result of an untrusted tool, or one marked untrusted, sets it (approvals/results.py),
so the earliest such result in the session is the one.

One query for a whole page of cards, however many: the taint source is a correlated
subquery on the same rows, not a query per session.
"""

from django.db.models import Case, OuterRef, Q, Subquery, When

from approvals.models import ToolCall

# The rationale is the agent's prose; a card is pushed to every inbox, so it is capped.
RATIONALE_MAX_CHARS = 2000


def _tainting_results():
    return (ToolCall.objects.filter(run__session_id=OuterRef("run__session_id"), reported_at__isnull=False)
            .filter(Q(untrusted_tool=True) | Q(untrusted_result=True)).order_by("reported_at", "pk"))


def contexts_for(approvals) -> dict:
    """(run id, tool call id) → {rationale, autonomy, tainted_by} for each approval's gated call."""
    return contexts_for_calls([(a.run_id, a.tool_call_id, a.session.tainted) for a in approvals])


def contexts_for_calls(calls) -> dict:
    """`contexts_for` from (run id, tool call id, session tainted) triples: a page's rows, not models."""
    if not calls:
        return {}
    keys = {(run, call) for run, call, _ in calls}
    tainted_runs = {run for run, _, tainted in calls if tainted}  # the taint as the card says it
    rows = ToolCall.objects.filter(run_id__in={run for run, _ in keys}, tool_call_id__in={call for _, call in keys})
    columns = ["run_id", "tool_call_id", "metadata", "run__autonomy"]
    if tainted_runs:  # most pages have none: their query is built and run without the two subqueries
        rows = rows.annotate(taint_tool=_for_runs(tainted_runs, _tainting_results().values("tool")[:1]),
                             taint_at=_for_runs(tainted_runs, _tainting_results().values("reported_at")[:1]))
        columns += ["taint_tool", "taint_at"]
    rows = rows.values(*columns).order_by()  # read into a dict by key: the ledger's default order would only add a sort
    found = {}
    for row in rows:
        key = (row["run_id"], row["tool_call_id"])
        if key not in keys:
            continue  # the same call id in another of the page's runs
        found[key] = {
            "rationale": _rationale(row["metadata"]),
            "autonomy": row["run__autonomy"],
            "tainted_by": ({"tool": row["taint_tool"], "at": row["taint_at"].isoformat()}
                           if row["run_id"] in tainted_runs and row["taint_tool"] else None),
        }
    return found


def _for_runs(run_ids, subquery):
    """`subquery` for the rows of `run_ids` only, NULL for the others: the database looks for
    a taint source only in tainted sessions (most cards' sessions are not), not once per card."""
    return Case(When(run_id__in=list(run_ids), then=Subquery(subquery)), default=None)


def untainted_context(metadata, autonomy: str) -> dict:
    """The context of a call in an untainted session, from the call itself (no query): the gate's suspend."""
    return {"rationale": _rationale(metadata), "autonomy": autonomy, "tainted_by": None}


def _rationale(metadata) -> str | None:
    value = metadata.get("rationale") if isinstance(metadata, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    return value if len(value) <= RATIONALE_MAX_CHARS else value[:RATIONALE_MAX_CHARS] + "…"


def empty_context() -> dict:
    """A card whose call is not in the ledger (it always is for a gated call; kept safe anyway)."""
    return {"rationale": None, "autonomy": None, "tainted_by": None}
