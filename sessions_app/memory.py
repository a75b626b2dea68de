"""Working memory: the one parser of run-summary blocks, and the rolling memory it makes of a run of them.

The memory endpoint (runs/session_views.py) feeds it the session's latest summaries.

A run's close may carry a `summary`. Its blocks are Markdown-ish sections:

    ## facts
    - Potassium 5.9 mmol/L this morning
    ## open questions
    - Repeat the potassium at 18:00?

Known sections: `facts` and `decisions` accumulate across runs (newest last,
duplicates dropped, the newest MAX_ITEMS kept); `plan` and `open_questions`
are what the latest run that mentions them says. Anything else — text before the
first header, an unknown section, a section without items or with a line that
is not an item — is kept as a plain-text note, never an error: a summary is the
model's prose and must not fail a close or hide what it said.
"""

import re
from dataclasses import dataclass, field

ACCUMULATED = ("facts", "decisions")
LATEST_WINS = ("plan", "open_questions")
MAX_ITEMS = 50
MAX_NOTES = 20
RUN_WINDOW = 50  # the rolling window: memory reads the summaries of the latest runs only

_HEADER = re.compile(r"^#{1,6}\s*(.*?)\s*:?\s*$")
_ITEM = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")


@dataclass
class ParsedSummary:
    sections: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _section_name(title: str) -> str:
    return re.sub(r"[\s-]+", "_", title.strip().lower())


def parse_summary(text: str) -> ParsedSummary:
    """Split a run summary into known sections and plain-text notes. Never raises."""
    parsed = ParsedSummary()
    blocks: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in (text or "").splitlines():
        header = _HEADER.match(line)
        if header:
            blocks.append((line, []))
        else:
            blocks[-1][1].append(line)
    for header_line, lines in blocks:
        body = [line for line in lines if line.strip()]
        name = _section_name(_HEADER.match(header_line).group(1)) if header_line else None
        items = [_ITEM.match(line) for line in body]
        if name in ACCUMULATED + LATEST_WINS and body and all(items):
            parsed.sections.setdefault(name, []).extend(match.group(1) for match in items)
        elif body or header_line:
            parsed.notes.append("\n".join(([header_line] if header_line else []) + body).strip())
    parsed.notes = [note for note in parsed.notes if note]
    return parsed


def rolling_memory(summaries) -> dict:
    """Fold `(run_id, summary)` pairs, oldest first, into the session's working memory."""
    memory = {name: [] for name in ACCUMULATED + LATEST_WINS}
    notes = []
    for run_id, summary in summaries:
        parsed = parse_summary(summary)
        for name in ACCUMULATED:
            for item in parsed.sections.get(name, []):
                if item in memory[name]:
                    memory[name].remove(item)
                memory[name].append(item)
            memory[name] = memory[name][-MAX_ITEMS:]
        for name in LATEST_WINS:
            if name in parsed.sections:
                memory[name] = parsed.sections[name][:MAX_ITEMS]
        notes.extend({"run": str(run_id), "text": note} for note in parsed.notes)
    return {**memory, "notes": notes[-MAX_NOTES:]}
