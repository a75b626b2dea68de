"""The conversation turn that led to a gated call: what the clinician last asked, and what the
agent said before it made the call, from the session's messages (the client's record of the chat).

The user message is the last one written by the time the call parked. The agent's is the last
assistant message that belongs to the call's run (the client linked it), or else the last one
written by then and after that user message: an answer to an earlier question is not this turn's.
Its text counts up to the call's own tool part, when the message holds one.

`turn_columns` are two correlated subqueries, so whoever reads a card's context reads its turn in
the same statement (approvals/card_context.py): a page of cards costs no query more. Each reads
only the start of its message's parts (HEAD_CHARS of their JSON text): a message of megabytes
costs the page what a short one does, and its text is cut where the read stopped (and says so).
"""

import json
from datetime import UTC, datetime
from uuid import UUID

from django.db.models import JSONField, Q, Subquery, TextField
from django.db.models.functions import Cast, JSONObject, Left

from sessions_app.models import Message
from sessions_app.models.message import MessageRole

# What a card carries of each message; the inbox shows less and folds the rest behind "Show more".
TEXT_MAX_CHARS = 1500
# How much of a message's parts (JSON text) is read to find its text.
HEAD_CHARS = 16 * 1024

_decoder = json.JSONDecoder()


def turn_columns(*, session, run, at) -> dict:
    """Annotations `turn_asked` and `turn_answered` (a message's seq, time, run and the start of its
    parts, or null) for rows whose session, run and parking time are `session`, `run` and `at`:
    OuterRefs on a page of rows, or plain values for a call being parked."""
    latest = Message.objects.filter(session_id=session).order_by("-seq")
    asked = latest.filter(role=MessageRole.USER, created_at__lte=at)
    answered = latest.filter(role=MessageRole.ASSISTANT).filter(Q(run_id=run) | Q(created_at__lte=at))
    return {"turn_asked": _first(asked), "turn_answered": _first(answered)}


def _first(messages):
    summary = JSONObject(seq="seq", at="created_at", run="run_id", head=Left(Cast("parts", TextField()), HEAD_CHARS))
    return Subquery(messages.values(summary=summary)[:1], output_field=JSONField())


def turn(asked, answered, *, run_id, tool_call_id: str) -> dict | None:
    """`{user, agent}` (each `{text, at}`, or None) from the two columns; None when neither says anything."""
    user = _said(asked)
    agent = None
    if answered and (not asked or answered["seq"] > asked["seq"] or _same_run(answered["run"], run_id)):
        agent = _said(answered, until=tool_call_id)
    if user is None and agent is None:
        return None
    return {"user": user, "agent": agent}


def _said(message, *, until: str | None = None) -> dict | None:
    if not message or not isinstance(message.get("head"), str):
        return None
    texts, whole = _texts(message["head"], until)
    text = "\n\n".join(texts)
    if not text:
        return None
    if len(text) > TEXT_MAX_CHARS:
        text, whole = text[:TEXT_MAX_CHARS], False
    # `cut` rather than an ellipsis in the text: the text stays the agent's own, which the inbox
    # checks for look-alike characters (an ellipsis is one).
    return {"text": text, "at": _iso(message["at"]), "cut": not whole}


def _texts(head: str, until: str | None) -> tuple[list[str], bool]:
    """The text parts of `head` (the start of a parts array's JSON text) up to the tool part for call
    `until`, and whether nothing was lost to the cut: a part cut short is left out."""
    texts, at = [], head.find("[") + 1
    while 0 < at < len(head):
        while at < len(head) and head[at] in " \t\r\n,":
            at += 1
        if at < len(head) and head[at] == "]":
            return texts, True
        try:
            part, at = _decoder.raw_decode(head, at)
        except ValueError:
            break
        if not isinstance(part, dict):
            continue
        if until is not None and part.get("toolCallId") == until:
            return texts, True
        if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"].strip():
            texts.append(part["text"].strip())
    return texts, False


def _same_run(value, run_id) -> bool:
    # PostgreSQL writes a UUID into JSON with hyphens, SQLite without: compared as UUIDs.
    try:
        return value is not None and UUID(str(value)) == UUID(str(run_id))
    except ValueError:
        return False


def _iso(value) -> str | None:
    # PostgreSQL writes the offset ('…+00:00'); SQLite holds Django's naive UTC text.
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()
