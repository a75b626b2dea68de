"""What a reviewer needs to judge a card beyond the call itself: why the agent asked,
what was said before it asked, and the session it asked in.

The gated call's `metadata.rationale` (stored by the gate in the ToolCall ledger), the
conversation turn that led to the call (sessions_app/turns.py), the run's autonomy (the
gate decides on the run's, not the session's default), and for a tainted session the
result that tainted it: taint is monotone and only a reported result of an untrusted tool,
or one marked untrusted, sets it (approvals/results.py), so the earliest such result in
the session is the one.

One query for a whole page of cards, however many: the rationale, the turn and the taint
source are correlated subqueries on the page's approval rows, not a query per card. A call
being parked has no approval row yet: `parked_context` reads its turn and taint in one
query on its session, and takes the rationale and autonomy from the call and its run.
"""

from django.db.models import Case, OuterRef, Q, Subquery, When
from django.db.models.fields.json import KT
from django.db.models.functions import Left
from django.utils import timezone

from approvals.models import Approval, ToolCall
from sessions_app.models import Session
from sessions_app.turns import turn, turn_columns

# The rationale is the agent's prose; a card is pushed to every inbox, so it is capped. The API
# refuses a longer one (approvals/serializers.py); the cap holds for what was stored before.
RATIONALE_MAX_CHARS = 2000


def _tainting_results(session):
    return (
        ToolCall.objects.filter(run__session_id=session, reported_at__isnull=False)
        .filter(Q(untrusted_tool=True) | Q(untrusted_result=True))
        .order_by("reported_at", "pk")
    )


def _taint_columns(session, when=None) -> dict:
    """The tool and time of the result that tainted `session`; with `when`, only for the rows it holds."""
    tool = Subquery(_tainting_results(session).values("tool")[:1])
    at = Subquery(_tainting_results(session).values("reported_at")[:1])
    if when is not None:
        tool, at = (Case(When(when, then=column), default=None) for column in (tool, at))
    return {"taint_tool": tool, "taint_at": at}


def contexts_for(approvals) -> dict:
    """(run id, tool call id) → {rationale, turn, autonomy, tainted_by} for each approval's gated call."""
    return contexts_for_calls([(a.pk, a.run_id, a.tool_call_id, a.session.tainted) for a in approvals])


def contexts_for_calls(calls) -> dict:
    """`contexts_for` from (approval id, run id, tool call id, session tainted): a page's rows, not models."""
    if not calls:
        return {}
    tainted_runs = {run for _, run, _, tainted in calls if tainted}  # the taint as the card says it
    the_call = ToolCall.objects.filter(run_id=OuterRef("run_id"), tool_call_id=OuterRef("tool_call_id"))
    rows = Approval.objects.filter(pk__in=[approval for approval, *_ in calls]).annotate(
        call_rationale=Subquery(the_call.values(text=Left(KT("metadata__rationale"), RATIONALE_MAX_CHARS + 1))[:1]),
        **turn_columns(session=OuterRef("session_id"), run=OuterRef("run_id"), at=OuterRef("requested_at")),
    )
    columns = ["run_id", "tool_call_id", "run__autonomy", "call_rationale", "turn_asked", "turn_answered"]
    if tainted_runs:
        # Most pages have none: their query is built and run without the two subqueries. With some, the
        # database looks for a taint source only in tainted sessions' rows, not once per card.
        rows = rows.annotate(**_taint_columns(OuterRef("session_id"), Q(run_id__in=list(tainted_runs))))
        columns += ["taint_tool", "taint_at"]
    found = {}
    for row in rows.values(*columns).order_by():  # read into a dict by key: an order would only add a sort
        found[(row["run_id"], row["tool_call_id"])] = {
            "rationale": _rationale(row["call_rationale"]),
            "turn": turn(
                row["turn_asked"], row["turn_answered"], run_id=row["run_id"], tool_call_id=row["tool_call_id"]
            ),
            "autonomy": row["run__autonomy"],
            "tainted_by": _taint(row) if row["run_id"] in tainted_runs else None,
        }
    return found


def parked_context(run, metadata, tool_call_id: str) -> dict:
    """The context of a call parking now in `run` (its approval not yet written): one query, on its session."""
    columns = turn_columns(session=OuterRef("pk"), run=run.pk, at=timezone.now())
    if run.session.tainted:
        columns.update(_taint_columns(OuterRef("pk")))
    row = Session.objects.filter(pk=run.session_id).annotate(**columns).values(*columns).first() or {}
    return {
        "rationale": _rationale(metadata.get("rationale") if isinstance(metadata, dict) else None),
        "turn": turn(row.get("turn_asked"), row.get("turn_answered"), run_id=run.pk, tool_call_id=tool_call_id),
        "autonomy": run.autonomy,
        "tainted_by": _taint(row) if run.session.tainted else None,
    }


def _taint(row) -> dict | None:
    return {"tool": row["taint_tool"], "at": row["taint_at"].isoformat()} if row.get("taint_tool") else None


def _rationale(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value if len(value) <= RATIONALE_MAX_CHARS else value[:RATIONALE_MAX_CHARS] + "…"


def empty_context() -> dict:
    """A card whose call is not in the ledger (it always is for a gated call; kept safe anyway)."""
    return {"rationale": None, "turn": None, "autonomy": None, "tainted_by": None}
