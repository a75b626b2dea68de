"""The audit log as CSV: streamed page by page, so a million rows never sit in memory.

Pages are read by keyset (`id < last ORDER BY id DESC LIMIT n`), each its own short
query: no server-side cursor is held open across the response (a WITH HOLD cursor
would make PostgreSQL materialise the whole result first, and a pooled connection
would stay pinned to one slow download), and rows appended during the download
(higher ids) are simply not in it.

Spreadsheet safety: a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
return gets a leading `'`, so a spreadsheet shows it as text instead of running it
as a formula (OWASP "CSV injection"). Details are written as JSON.
"""

import csv
import io
import json

COLUMNS = ("id", "at", "kind", "actor", "actor_user_id", "actor_client_id", "patient_ref", "session_id",
           "run_id", "approval_id", "tool", "op", "decision", "rule_id", "data", "chain", "seq", "prev_hash",
           "hash")
HEADER = [*COLUMNS[:14], "details", *COLUMNS[15:]]
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PAGE = 2000


def neutralise(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _cell(value) -> str:
    if type(value) is str:  # most cells: checked first
        return "'" + value if value.startswith(_FORMULA_STARTS) else value
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    elif hasattr(value, "isoformat"):
        value = value.isoformat()
    return neutralise(str(value))


def _pages(queryset, page: int):
    queryset = queryset.order_by("-id").values_list(*COLUMNS)
    rows = list(queryset[:page])
    while rows:
        yield rows
        if len(rows) < page:
            return
        rows = list(queryset.filter(id__lt=rows[-1][0])[:page])


def csv_chunks(queryset, *, page: int = PAGE):
    """The CSV text of `queryset` (newest first), one chunk per page of rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(HEADER)
    yield buffer.getvalue()
    for rows in _pages(queryset, page):
        buffer.seek(0)
        buffer.truncate()
        writer.writerows([_cell(value) for value in row] for row in rows)
        yield buffer.getvalue()
