"""Every export leaves a trace (SPEC section 8): one CSV exporter behind every admin list.

Audited with who, which list, the filter or selection and the row count; formula-neutralised;
JSON written as JSON; UTF-8 with a byte-order mark; streamed (the audit log's 100,000-row
export in tests/governance/test_audit_admin.py holds its memory flat).
"""

import csv
import io
import json

import pytest
from asgiref.sync import async_to_sync
from django.contrib.admin.sites import site
from django.test import AsyncRequestFactory

from approvals.models import Approval, ToolCall
from audit.models import AuditEvent
from governance import csv_export
from runs.models import Run, RunEvent
from sessions_app.models import Session
from tests.helpers.admin_forms import admin_client, post
from tests.helpers.approval_loop import parked_run

EVIL_TITLE = '=HYPERLINK("http://evil.example","Open chart")'
TATWEEL_DOSE = "\u0640 2.5 / 25 \u0640"
LISTS = [Approval, Session, Run, ToolCall, RunEvent, AuditEvent]


@pytest.fixture
def history(api, catalog):
    """A parked prescription whose session has a formula for a title and a dose between tatweels."""
    return parked_run(
        api,
        {"title": EVIL_TITLE, "patient_ref": "MRN-40001"},
        args={"drug": "methotrexate", "dose_mg_per_week": TATWEEL_DOSE},
    )


def url(model) -> str:
    return f"/admin/{model._meta.app_label}/{model._meta.model_name}/"


def export_all(http, model, **filters):
    query = "?" + "&".join(f"{key}={value}" for key, value in filters.items()) if filters else ""
    ids = [str(pk) for pk in model.objects.values_list("pk", flat=True)[:1]]
    return post(http, url(model) + query, {"action": "export_csv", "select_across": "1", "_selected_action": ids})


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def rows(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(body(response).decode("utf-8-sig"))))


@pytest.mark.parametrize("model", LISTS, ids=lambda model: model._meta.label)
def test_every_list_exports_audited_with_its_filter_and_row_count(carl, history, model):
    http = admin_client(carl)  # (signing in is audited too)
    expected = model.objects.count()
    response = export_all(http, model)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert len(rows(response)) == expected
    export = AuditEvent.objects.filter(kind="export").latest("id")
    assert (export.actor, export.actor_user, export.decision) == ("user:carl", carl, "exported")
    assert export.data == {
        "list": model._meta.label,
        "scope": "every row matching the filter",
        "filter": {},
        "rows": expected,
    }


def test_the_selection_and_the_filter_are_in_the_audit_row(carl, history):
    run_id, approval = history
    response = post(
        admin_client(carl),
        url(Approval) + "?status__exact=pending",
        {"action": "export_csv", "_selected_action": [approval["id"]]},
    )
    assert [row["id"] for row in rows(response)] == [approval["id"]]
    export = AuditEvent.objects.get(kind="export")
    assert export.data == {
        "list": "approvals.Approval",
        "scope": "selected",
        "filter": {"status__exact": "pending"},
        "ids": [approval["id"]],
        "rows": 1,
    }


def test_a_formula_in_a_session_title_comes_out_neutralised(carl, history):
    (session,) = rows(export_all(admin_client(carl), Session))
    assert session["title"] == "'" + EVIL_TITLE


def test_json_fields_are_written_as_json(carl, history):
    (approval,) = rows(export_all(admin_client(carl), Approval))
    assert json.loads(approval["args"]) == {"drug": "methotrexate", "dose_mg_per_week": TATWEEL_DOSE}
    assert "'drug'" not in approval["args"]  # not Python's repr


def test_right_to_left_characters_cannot_reorder_a_cell(carl, history):
    (approval,) = rows(export_all(admin_client(carl), Approval))
    # Escaped in JSON (the value parses back as stored), so a spreadsheet shows the digits in their order.
    assert "\\u0640 2.5 / 25 \\u0640" in approval["args"] and "\u0640" not in approval["args"]
    assert csv_export.cell(TATWEEL_DOSE) == "⟨U+0640⟩ 2.5 / 25 ⟨U+0640⟩"


def test_the_file_is_utf8_with_a_byte_order_mark(carl, history):
    assert body(export_all(admin_client(carl), Session)).startswith("\ufeffid,".encode())


def test_an_export_whose_audit_row_fails_serves_nothing(carl, history, monkeypatch):
    http = admin_client(carl)
    http.raise_request_exception = False

    def refuse(*args, **kwargs):
        raise RuntimeError("the audit log is out of reach")

    monkeypatch.setattr("audit.trail.record", refuse)
    response = export_all(http, Session)
    assert response.status_code == 500 and not hasattr(response, "streaming_content")


def test_under_asgi_the_export_streams_through_an_async_iterator(carl, history):
    request = AsyncRequestFactory().post(url(Session), {"action": "export_csv", "select_across": "1"})
    request.user = carl
    response = site._registry[Session].export_csv(request, Session.objects.all())
    assert response.is_async

    async def read():
        return b"".join([chunk async for chunk in response.streaming_content])

    assert b"'=HYPERLINK(" in async_to_sync(read)()
