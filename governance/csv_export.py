"""One CSV export for every admin list: audited, spreadsheet-safe, JSON as JSON, streamed in flat memory.

Audited: who exported which list, with which filter or selection, and how many
rows, in a transaction of its own that commits before the first byte leaves; if
the row cannot be written nothing is served. The count and the highest id are read
in one statement, and a list with integer ids is served up to that id, so the
count is what the file holds (rows added during the download are not in it).

Spreadsheet-safe: a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
return gets a leading `'`, so a spreadsheet shows it as text instead of running it
(OWASP "CSV injection"). And as on every admin page (core/display.py), hidden and
right-to-left characters cannot act: in a text cell each becomes its ⟨U+…⟩ mark
(a look-alike keeps its mark after it); in a JSON cell each is written as a \\uXXXX
escape, so the JSON still parses to the value as stored. UTF-8 with a byte-order
mark, so a spreadsheet does not guess another encoding.

Streamed: pages are read by keyset (`pk < last ORDER BY pk DESC LIMIT n`), each its own
short query. No server-side cursor is held open across the response (a WITH HOLD
cursor would make PostgreSQL materialise the whole result first, and a pooled
connection would stay pinned to one slow download). Under ASGI the pages are read
through an async iterator: Django would otherwise gather a sync one whole first.
"""

import csv
import io
import json
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.contrib.admin import helpers
from django.contrib.admin.views.main import PAGE_VAR
from django.core.handlers.asgi import ASGIRequest
from django.db import models, transaction
from django.db.models import Count, Max
from django.http import StreamingHttpResponse
from django.utils import timezone

from audit import trail as audit
from core.display import escape_marked, marked_text

PAGE = 2000
BOM = "\ufeff"
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Column:
    header: str
    attname: str  # what values_list reads: a field's attname (a foreign key's id)


def columns_of(model) -> list[Column]:
    """Every concrete field of `model`, headed by its name."""
    return [Column(field.name, field.attname) for field in model._meta.concrete_fields]


def neutralise(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def cell(value) -> str:
    if type(value) is str:  # most cells: checked first
        return neutralise(marked_text(value))
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return neutralise(escape_marked(json.dumps(value, ensure_ascii=False, sort_keys=True)))
    if hasattr(value, "isoformat"):
        return neutralise(value.isoformat())
    return neutralise(str(value))


def _pages(queryset, attnames: list[str], page: int):
    pk = queryset.model._meta.pk.attname
    at = attnames.index(pk)
    queryset = queryset.order_by(f"-{pk}").values_list(*attnames)
    rows = list(queryset[:page])
    while rows:
        yield rows
        if len(rows) < page:
            return
        rows = list(queryset.filter(**{f"{pk}__lt": rows[-1][at]})[:page])


def csv_chunks(queryset, columns: list[Column], *, page: int = PAGE):
    """The CSV text of `queryset` (newest id first), the header then one chunk per page of rows."""
    attnames = [column.attname for column in columns]
    pk = queryset.model._meta.pk.attname
    if pk not in attnames:
        attnames.append(pk)  # the keyset needs it; not written
    width = len(columns)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([neutralise(column.header) for column in columns])
    yield BOM + buffer.getvalue()
    for rows in _pages(queryset, attnames, page):
        buffer.seek(0)
        buffer.truncate()
        writer.writerows([cell(value) for value in row[:width]] for row in rows)
        yield buffer.getvalue()


async def _async_chunks(chunks):
    def next_chunk():
        return next(chunks, None)

    while (chunk := await sync_to_async(next_chunk)()) is not None:
        yield chunk


def changelist_filter(request) -> dict:
    """The changelist's filters and search, as the export's audit row keeps them."""
    return {key: values if len(values) > 1 else values[0] for key, values in request.GET.lists() if key != PAGE_VAR}


def selection(request, model) -> dict:
    """What an admin action was asked to export: every row matching the filter, or the ticked ones."""
    if request.POST.get("select_across") == "1":
        return {"scope": "every row matching the filter", "filter": changelist_filter(request)}
    pk = model._meta.pk
    ids = [pk.to_python(value) for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)]
    return {
        "scope": "selected",
        "filter": changelist_filter(request),
        "ids": sorted(ids) if isinstance(pk, models.AutoField) else sorted(str(value) for value in ids),
    }


def export(request, queryset, *, details: dict, columns: list[Column] | None = None) -> StreamingHttpResponse:
    """`queryset` as a CSV download, audited first (who, which list, `details`, how many rows)."""
    model = queryset.model
    integer_ids = isinstance(model._meta.pk, models.AutoField)  # BigAutoField is one too
    with transaction.atomic():
        if integer_ids:
            counted = queryset.order_by().aggregate(rows=Count("pk"), top=Max("pk"))
            queryset = queryset.filter(pk__lte=counted["top"] or 0)
        else:
            counted = {"rows": queryset.order_by().count()}
        audit.record(
            "export",
            actor_user=request.user,
            decision="exported",
            data={"list": model._meta.label, **details, "rows": counted["rows"]},
        )
    chunks = csv_chunks(queryset, columns or columns_of(model))
    response = StreamingHttpResponse(
        _async_chunks(chunks) if isinstance(request, ASGIRequest) else chunks, content_type="text/csv; charset=utf-8"
    )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="{model._meta.model_name}-{stamp}.csv"'
    return response
