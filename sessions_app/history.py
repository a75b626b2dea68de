"""A session's conversation as AI SDK v6 `UIMessage`s, so a `useChat` front end can restore it as is.

The client's own messages, in order, with each run's gated calls merged in from
the run's persisted stream frames (sessions_app/ui_parts.py): into the run's
assistant message when the client linked one (a part the client stored for the
same toolCallId is replaced: Condor's state of a gated call is the one that
counts), else into an assistant message of its own, placed where its first call happened.
At most five queries whatever the length: key, session, messages, frames (the
runs app reads those: sessions_app/extensions.py), and the first-frame times of
runs without a message of their own, if there are any.
"""

import json
from bisect import bisect_right

from django.db.models import TextField
from django.db.models.functions import Cast

from sessions_app import extensions
from sessions_app.models import Message
from sessions_app.ui_parts import fold


def build_history(session) -> list[dict]:
    # Parts as text, parsed here: Django's JSON converter costs more per row than the parse.
    rows = list(Message.objects.filter(session=session).order_by("seq")
                .values_list("message_id", "role", Cast("parts", TextField()), "run_id", "created_at"))
    history = [{"id": message_id, "role": role, "parts": json.loads(parts)} for message_id, role, parts, *_ in rows]
    owner = {run_id: message for (_, role, _, run_id, _), message in zip(rows, history)
             if role == "assistant" and run_id is not None}  # the last one linked to a run wins

    chunks: dict = {}
    for run_id, frames in extensions.run_frames(session):
        chunks.setdefault(run_id, []).extend(frames)
    unowned = {}
    for run_id, run_chunks in chunks.items():
        parts = fold(run_chunks)
        if parts and run_id in owner:
            _merge(owner[run_id], parts)
        elif parts:
            unowned[run_id] = parts
    if not unowned:
        return history
    # A run with no message of its own goes before the first message written after its first call:
    # found by bisection over the messages' times (in conversation order), not by a scan per run.
    # Only such runs need that time, so only they cost a query for it.
    first_at = extensions.first_frame_times(list(unowned))
    times = [row[4] for row in rows]
    placed: dict[int, list] = {}
    for run_id, parts in unowned.items():
        placed.setdefault(bisect_right(times, first_at[run_id]), []).append(
            (first_at[run_id], {"id": f"run_{run_id}", "role": "assistant", "parts": [{"type": "step-start"}, *parts]}))
    ordered = []
    for index, message in enumerate([*history, None]):
        ordered.extend(run_message for _, run_message in sorted(placed.get(index, ()), key=lambda pair: pair[0]))
        if message is not None:
            ordered.append(message)
    return ordered


def _merge(message: dict, parts: list[dict]) -> None:
    ours = {_key(part): part for part in parts}
    merged = [ours.pop(_key(part), part) for part in message["parts"]]
    message["parts"] = merged + [part for part in parts if _key(part) in ours]


def _key(part) -> tuple:
    if not isinstance(part, dict):
        return ("", id(part))
    if "toolCallId" in part and str(part.get("type", "")).startswith("tool-"):
        return ("tool", part["toolCallId"])
    if str(part.get("type", "")).startswith("data-") and "id" in part:
        return (part["type"], part["id"])
    return ("", id(part))
