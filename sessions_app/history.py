"""A session's conversation as AI SDK v6 `UIMessage`s, so a `useChat` front end can restore it as is.

The client's own messages, in order, with each run's gated calls merged in from
the run's persisted stream frames (sessions_app/ui_parts.py): into the run's
assistant message when the client linked one (a part the client stored for the
same toolCallId is replaced: Condor's state of a gated call is the one that
counts), else into an assistant message of its own, placed where its first call happened.
Five queries whatever the length: key, session, messages, runs, frames.
"""

from bisect import bisect_right

from sessions_app.models import Message
from sessions_app.ui_parts import fold


def build_history(session) -> list[dict]:
    from runs.models import Run, RunEvent

    messages = list(Message.objects.filter(session=session).order_by("seq")
                    .values_list("message_id", "role", "parts", "run_id", "created_at"))
    runs = list(Run.objects.filter(session=session).values_list("id", flat=True))
    chunks, first_at = {}, {}
    events = (RunEvent.objects.filter(run_id__in=runs).exclude(frames=[]).order_by("id")
              .values_list("run_id", "frames", "created_at"))
    for run_id, frames, at in events:
        chunks.setdefault(run_id, []).extend(frames)
        first_at.setdefault(run_id, at)

    history = [{"id": message_id, "role": role, "parts": list(parts), "_run": run_id, "_at": at}
               for message_id, role, parts, run_id, at in messages]
    owner = {m["_run"]: m for m in history if m["role"] == "assistant" and m["_run"] is not None}  # last wins
    # A run with no message of its own goes before the first message written after its first call:
    # found by bisection over the messages' times (in conversation order), not by a scan per run.
    times = [m["_at"] for m in history]
    placed: dict[int, list[dict]] = {}
    for run_id, run_chunks in chunks.items():
        parts = fold(run_chunks)
        if not parts:
            continue
        if run_id in owner:
            _merge(owner[run_id], parts)
        else:
            at = first_at[run_id]
            placed.setdefault(bisect_right(times, at), []).append(
                {"id": f"run_{run_id}", "role": "assistant", "parts": [{"type": "step-start"}, *parts], "_at": at})
    ordered = []
    for index, message in enumerate([*history, None]):
        ordered.extend(sorted(placed.get(index, ()), key=lambda m: m["_at"]))
        if message is not None:
            ordered.append(message)
    return [{"id": m["id"], "role": m["role"], "parts": m["parts"]} for m in ordered]


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
