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
being parked has no approval row yet: its turn and taint come with the read of the approvals
the park asks about (`parked_sql`, approvals/suspend.read_known); its rationale and autonomy
come from the call and its run.
"""

from django.db.models import Case, OuterRef, Q, Subquery, When
from django.db.models.fields.json import KT
from django.db.models.functions import Left

from approvals.models import Approval, ToolCall
from core.rows import choice_literal, column, db_value, table, value_reader
from runs.models import Run
from sessions_app.models import Message
from sessions_app.models.message import MessageRole
from sessions_app.turns import HEAD_CHARS, turn, turn_columns

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


# A call being parked has no approval row yet: its turn and taint are read by the statement that
# reads the approvals the park asks about (approvals/suspend.read_known), from these parts.


def parked_sql(db, tainted: bool) -> tuple[list[str], str]:
    """(columns, joins) that read a parking call's turn and taint: the turn's two messages (as
    `turn_columns` picks them) and, for a tainted session, the result that tainted it (as
    `_tainting_results` does), each the row a scalar subquery names, LEFT JOINed after a one-row
    source so that none found is a row of nulls. Parameters: `parked_params`, in the joins.

    Written out rather than as `turn_columns` annotations: the ORM builds those expressions afresh
    for every call, which cost a suspend more CPU than all its writes together.
    """
    messages = table(Message, db=db)

    def col(name, alias):
        return column(Message, name, alias, db=db)

    def latest(role, when: str) -> str:
        return (
            f"(SELECT {col('seq', 'm')} FROM {messages} AS m WHERE {col('session', 'm')} = %s "
            f"AND {col('role', 'm')} = {choice_literal(role)} AND {when} ORDER BY {col('seq', 'm')} DESC LIMIT 1)"
        )

    def summary(alias) -> list[str]:  # what `_message` reads
        head = f"SUBSTR(CAST({col('parts', alias)} AS TEXT), 1, {HEAD_CHARS})"
        return [col("seq", alias), col("created_at", alias), col("run_id", alias), head]

    asked = latest(MessageRole.USER, f"{col('created_at', 'm')} <= %s")
    answered = latest(MessageRole.ASSISTANT, f"({col('run_id', 'm')} = %s OR {col('created_at', 'm')} <= %s)")
    columns = [*summary("asked"), *summary("answered")]
    joins = (
        f"LEFT OUTER JOIN {messages} AS asked ON {col('seq', 'asked')} = {asked} "
        f"LEFT OUTER JOIN {messages} AS answered ON {col('seq', 'answered')} = {answered}"
    )
    if tainted:
        calls, runs = table(ToolCall, db=db), table(Run, db=db)

        def call(name, alias="t"):
            return column(ToolCall, name, alias, db=db)

        first_taint = (
            f"(SELECT {call('id')} FROM {calls} AS t INNER JOIN {runs} AS r ON {call('run')} = "
            f"{column(Run, 'id', 'r', db=db)} WHERE {column(Run, 'session', 'r', db=db)} = %s "
            f"AND {call('reported_at')} IS NOT NULL AND ({call('untrusted_tool')} OR {call('untrusted_result')}) "
            f"ORDER BY {call('reported_at')}, {call('id')} LIMIT 1)"
        )
        columns += [call("tool", "taint"), call("reported_at", "taint")]
        joins += f" LEFT OUTER JOIN {calls} AS taint ON {call('id', 'taint')} = {first_taint}"
    return columns, joins


def parked_params(run, now) -> list:
    """`parked_sql`'s parameters for a call parking in `run` at `now` (its session loaded)."""
    at = db_value(Message, "created_at", now)
    session = db_value(Message, "session", run.session_id)
    params = [session, at, session, db_value(Message, "run_id", run.pk), at]
    if run.session.tainted:
        params.append(db_value(Run, "session", run.session_id))
    return params


def parked_context(values, run, metadata, tool_call_id: str) -> dict:
    """The context of a call parking now in `run` (its approval not yet written), from `parked_sql`'s
    `values`: the same turn and taint `contexts_for` reads for the card once it is written."""
    asked, answered = _message(values[:4]), _message(values[4:8])
    taint = None
    if run.session.tainted and values[8] is not None:
        taint = {"taint_tool": values[8], "taint_at": value_reader(ToolCall, "reported_at")(values[9])}
    return {
        "rationale": _rationale(metadata.get("rationale") if isinstance(metadata, dict) else None),
        "turn": turn(asked, answered, run_id=run.pk, tool_call_id=tool_call_id),
        "autonomy": run.autonomy,
        "tainted_by": _taint(taint) if taint else None,
    }


def _message(values) -> dict | None:
    """A message as `turn_columns` summarizes it, from `parked_sql`'s four columns (all null: none)."""
    seq, at, run, head = values
    return None if seq is None else {"seq": seq, "at": at, "run": run, "head": head}


def _taint(row) -> dict | None:
    return {"tool": row["taint_tool"], "at": row["taint_at"].isoformat()} if row.get("taint_tool") else None


def _rationale(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value if len(value) <= RATIONALE_MAX_CHARS else value[:RATIONALE_MAX_CHARS] + "…"


def empty_context() -> dict:
    """A card whose call is not in the ledger (it always is for a gated call; kept safe anyway)."""
    return {"rationale": None, "turn": None, "autonomy": None, "tainted_by": None}
