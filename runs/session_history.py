"""A session's conversation as AI SDK v6 `UIMessage`s, so a `useChat` front end can restore it as is.

The client's own messages, in order, with each run's gated calls merged in from
the run's persisted stream frames (sessions_app/ui_parts.py): into the run's
assistant message when the client linked one (a part the client stored for the
same toolCallId is replaced: Condor's state of a gated call is the one that
counts), else into an assistant message of its own, placed where its first call happened.
At most five queries whatever the length: key, session, messages, frames, and the first-frame times of
runs without a message of their own, if there are any.

Built as the response body, not as Python values for a renderer: a long session is
hundreds of JSON documents, and parsing each only to write it back out was most of the
request. A message's parts are spliced in as the database returns them unless a run's
parts may replace one of them; only the run frames, which have to be folded, are parsed,
one run at a time (a long session's parsed frames all alive at once drove the garbage
collector). The body is the same JSON value DRF's renderer wrote (PostgreSQL's jsonb
text keeps its own spacing inside the parts).
"""

import json
from bisect import bisect_right
from datetime import UTC, datetime
from uuid import UUID

from django.db.models import Min, TextField
from django.db.models.functions import Cast

from runs.models import RunEvent
from sessions_app.models import Message
from sessions_app.ui_parts import fold

# As DRF's JSONRenderer writes (compact, UTF-8 rather than \u escapes, no NaN); what it encodes
# here comes from json.loads, so it cannot hold a cycle. A str comes out as a JSON string.
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False).encode
_ROLES = {role: ',"role":' + _dumps(role) + ',"parts":' for role in ("user", "assistant", "system")}
_STEP_START = '[{"type":"step-start"},'  # what opens the message of a run that has none of its own


def history_json(session) -> bytes:
    """The history as a UTF-8 JSON array of UIMessages: the response body."""
    # Parts, run ids and times as text: Django's converters (JSON, timestamptz) and UUID objects cost
    # more per row than the rest of the request; the times are needed only to place runs without a
    # message. A run id is text here as in _run_frames, so the two match as dict keys.
    rows = list(_messages(session.pk))
    owner = {
        run_id: index
        for index, (_, role, _, run_id, _) in enumerate(rows)
        if role == "assistant" and run_id is not None
    }  # the last one linked to a run wins
    runs = _frames_by_run(session)
    # One run at a time: its frames are parsed, folded and written out before the next run's are read,
    # so what the collector tracks at any moment is one run's parts, not the session's: a long history
    # no longer sets off the young collections that pushed it, and everything else alive, into the
    # oldest generation.
    pieces = [
        _message(message_id, role, parts, _fold(runs.pop(run_id, ())) if owner.get(run_id) == index else None)
        for index, (message_id, role, parts, run_id, _) in enumerate(rows)
    ]
    # What is left are the runs without a message of their own (or whose message the client deleted).
    unowned = {
        run_id: message
        for run_id, message in ((run_id, _run_message(run_id, texts)) for run_id, texts in runs.items())
        if message is not None
    }
    if unowned:
        pieces = _placed(pieces, [row[4] for row in rows], unowned)
    # DRF escapes these two as well: JSON allows them raw, JavaScript string literals did not.
    body = ("[" + ",".join(pieces) + "]").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return body.encode()


def _messages(session_id):
    return (
        Message.objects.filter(session=session_id)
        .order_by("seq")
        .values_list(
            "message_id",
            "role",
            Cast("parts", TextField()),
            Cast("run_id", TextField()),
            Cast("created_at", TextField()),
        )
    )


def build_history(session) -> list[dict]:
    """The same history as Python values (the admin's session page)."""
    return json.loads(history_json(session))


def _frames_by_run(session) -> dict[str, list[str]]:
    """{run_id: its events' frames as JSON text, in commit order}, runs in the order of their first frame:
    text only, which the collector does not track."""
    runs: dict = {}
    for run_id, text in _run_frames(session):
        runs.setdefault(run_id, []).append(text)
    return runs


def _fold(texts) -> list[dict] | None:
    """A run's parts, or None if its frames (JSON texts) leave none."""
    if not texts:
        return None
    # One parse of the run's events together: a json.loads per row costs more.
    return fold(chunk for frames in json.loads("[" + ",".join(texts) + "]") for chunk in frames) or None


def _run_message(run_id: str, texts: list[str]) -> str | None:
    """The message of a run that has none of its own, as JSON text (None if the run left no parts)."""
    parts = _fold(texts)
    if parts is None:
        return None
    return _message(f"run_{UUID(run_id)}", "assistant", _STEP_START + _dumps(parts)[1:], None)


def _message(message_id: str, role: str, parts: str, run_parts: list | None) -> str:
    if run_parts:
        parts = _merged(parts, run_parts)
    role_key = _ROLES.get(role) or ',"role":' + _dumps(role) + ',"parts":'
    return '{"id":' + _dumps(message_id) + role_key + parts + "}"


def _merged(parts: str, run_parts: list[dict]) -> str:
    """The client's parts (JSON text) with its run's: a client part for the same gated call or data
    part is replaced where it stands, the other run parts follow the client's."""
    if '"toolCallId"' in parts or '"data-' in parts or not parts.startswith("["):
        # A client part the run's may replace (or parts of an unexpected shape): merge as values.
        return _dumps(_merge(json.loads(parts), run_parts))
    # Nothing to replace: the run's parts go after the client's, spliced as text.
    head = parts.rstrip()[:-1].rstrip()
    return head + ("," if head != "[" else "") + _dumps(run_parts)[1:]


def _merge(parts, run_parts: list[dict]) -> list:
    ours = {_key(part): part for part in run_parts}
    merged = [ours.pop(_key(part), part) for part in parts]
    return merged + [part for part in run_parts if _key(part) in ours]


def _key(part) -> tuple:
    if not isinstance(part, dict):
        return ("", id(part))
    if "toolCallId" in part and str(part.get("type", "")).startswith("tool-"):
        return ("tool", part["toolCallId"])
    if str(part.get("type", "")).startswith("data-") and "id" in part:
        return (part["type"], part["id"])
    return ("", id(part))


def _placed(pieces: list[str], times: list[str], unowned: dict[str, str]) -> list[str]:
    """The messages with each run that has no message of its own before the first message written
    after its first call: found by bisection over the messages' times (in conversation order), not
    by a scan per run. Only such runs need that time, so only they cost a query for it."""
    # The ids are text as the database wrote them (SQLite drops the hyphens): made UUIDs again here.
    run_ids = {run_id: UUID(run_id) for run_id in unowned}
    first_at = _first_frame_times(list(run_ids.values()))
    written = [_moment(text) for text in times]
    placed: dict[int, list] = {}
    for run_id, message in unowned.items():
        at = first_at[run_ids[run_id]]
        placed.setdefault(bisect_right(written, at), []).append((at, message))
    ordered = []
    for index, piece in enumerate([*pieces, None]):
        ordered.extend(run_message for _, run_message in sorted(placed.get(index, ()), key=lambda pair: pair[0]))
        if piece is not None:
            ordered.append(piece)
    return ordered


def _moment(text: str) -> datetime:
    # PostgreSQL writes the offset ('…+00'); SQLite holds Django's naive UTC text.
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _run_frames(session) -> list[tuple]:
    # Through the join rather than a list of the session's run ids: no query for the ids and no
    # IN list of hundreds of parameters. Text columns only: the frames as JSON for the caller to
    # parse (a run's rows in one go: Django's JSON converter costs more per row than the parse), the run
    # id as the database writes it (UUID objects cost more to build and to hash than the rest), and
    # no times, whose parsing costs as much.
    return list(_frames_of(session.pk))


def _frames_of(session_id):
    return (
        _with_frames(RunEvent.objects.filter(run__session=session_id))
        .order_by("id")
        .values_list(Cast("run_id", TextField()), Cast("frames", TextField()))
    )


def _first_frame_times(run_ids) -> dict:
    events = _with_frames(RunEvent.objects.filter(run_id__in=run_ids)).values("run_id").annotate(at=Min("created_at"))
    return {row["run_id"]: row["at"] for row in events.order_by()}


def _with_frames(events):
    return events.exclude(frames=[])
