"""The audit page of the admin (SPEC section 8): who may see it, what a compliance officer can find
on it, and what it costs (no full count, no DISTINCT scans, a pinned number of queries)."""

import csv
import io
import json
import tracemalloc

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from approvals.models import Approval
from audit.models import AuditEvent
from governance import audit_admin
from tests.governance.test_admin import admin_client, post
from tests.helpers.approval_loop import approval_row, parked_run

PAGE = "/admin/audit/auditevent/"


@pytest.fixture
def parked(api, catalog) -> Approval:
    """A prescription waiting for a reviewer, for patient MRN-30001."""
    return approval_row(parked_run(api, {"patient_ref": "MRN-30001"})[1]["id"])


def bulk_rows(count: int, **columns):
    """`count` rows in one INSERT ... SELECT (chain 'bulk'; not verifiable, not meant to be)."""
    values = {
        "kind": "verdict",
        "actor": "client:bulk",
        "patient_ref": "MRN-BULK",
        "tool": "record_vitals",
        "op": "create",
        "decision": "allow",
        "rule_id": "read.allow",
        **columns,
    }
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO approvals_auditevent (at, kind, actor, patient_ref, tool, op, decision, rule_id, data, "
            "chain, seq, prev_hash, hash) SELECT now(), %(kind)s, %(actor)s, %(patient_ref)s, %(tool)s, %(op)s, "
            "%(decision)s, %(rule_id)s, jsonb_build_object('n', g, 'note', '=HYPERLINK(\"x\")'), 'bulk', g, '', '' "
            "FROM generate_series(1, %(count)s) g",
            {**values, "count": count},
        )


def rows_of(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))


# --- who ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["carl", "gina"])
def test_compliance_and_governance_read_the_audit_log(request, persona, parked):
    http = admin_client(request.getfixturevalue(persona))
    assert http.get(PAGE).status_code == 200
    row = AuditEvent.objects.filter(kind="suspend").get()
    assert http.get(f"{PAGE}{row.pk}/change/").status_code == 200


def test_a_reviewer_is_refused_the_audit_log_and_its_export(rita, parked):
    http = Client()  # (the admin never gives a reviewer a CSRF token to send)
    http.force_login(rita)
    assert http.get(PAGE)["Location"].startswith("/admin/login/")
    assert http.post(f"{PAGE}export/")["Location"].startswith("/admin/login/")
    assert not AuditEvent.objects.filter(kind="export").exists()


def test_a_staff_user_without_the_view_permission_is_refused(db):
    from django.contrib.auth.models import User

    http = admin_client(User.objects.create(username="stan", is_staff=True))
    assert http.get(PAGE).status_code == 403
    assert post(http, f"{PAGE}export/", {}).status_code == 403


def test_nobody_can_add_or_change_an_audit_row(carl, parked):
    row = AuditEvent.objects.first()
    http = admin_client(carl)
    assert http.get(f"{PAGE}add/").status_code == 403
    assert post(http, f"{PAGE}{row.pk}/change/", {"decision": "allow"}).status_code == 403


# --- what a compliance officer finds -----------------------------------------------------------


def test_a_uuid_searched_as_displayed_finds_its_rows(carl, parked):
    http = admin_client(carl)
    for uuid in (str(parked.pk), str(parked.run_id), str(parked.session_id), parked.pk.hex):
        page = http.get(PAGE, {"q": uuid}).content.decode()
        assert "suspend" in page and "MRN-30001" in page, uuid


def test_a_patient_ref_is_found_by_search_and_by_its_filter(carl, parked):
    http = admin_client(carl)
    assert http.get(PAGE, {"q": "MRN-30001"}).context["cl"].result_count == 2  # verdict, suspend
    assert http.get(PAGE, {"patient_ref": "MRN-30001"}).context["cl"].result_count == 2
    assert http.get(PAGE, {"q": "MRN-404"}).context["cl"].result_count == 0


def test_a_row_id_is_found_by_search_and_other_digits_are_plain_text(carl, parked):
    http = admin_client(carl)
    row = AuditEvent.objects.order_by("id").first()
    assert row in http.get(PAGE, {"q": str(row.pk)}).context["cl"].result_list
    for term in ("\u00b2", "9" * 40):  # a superscript two is a digit to isdigit(); past any bigint
        response = http.get(PAGE, {"q": term})
        assert (response.status_code, response.context["cl"].result_count) == (200, 0), ascii(term)


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"kind": "suspend"}, 1),
        ({"decision": "require_approval"}, 1),
        ({"rule_id": "mutate.high-tier-always-approval"}, 2),
        ({"tool": "prescribe_medication"}, 3),  # and the catalog's registry_change
        ({"actor": "client:ward-agent"}, 2),
    ],
)
def test_each_filter_narrows_the_list(carl, parked, query, expected):
    assert admin_client(carl).get(PAGE, query).context["cl"].result_count == expected


def test_a_date_range_keeps_todays_rows_and_refuses_a_bad_date(carl, parked):
    from django.utils import timezone

    http = admin_client(carl)
    today = timezone.localdate().isoformat()
    assert http.get(PAGE, {"since": today, "until": today, "kind": "suspend"}).context["cl"].result_count == 1
    assert http.get(PAGE, {"until": "2000-01-01", "kind": "suspend"}).context["cl"].result_count == 0
    assert http.get(PAGE, {"since": "yesterday"})["Location"].endswith("?e=1")


def test_a_row_shows_its_time_to_the_second_its_details_as_json_and_links_that_open(carl, parked):
    http = admin_client(carl)
    row = AuditEvent.objects.get(kind="suspend")
    page = http.get(f"{PAGE}{row.pk}/change/").content.decode()
    assert row.at.strftime("%Y-%m-%d %H:%M:%S UTC") in page
    assert "&quot;reason_code&quot;: &quot;approval&quot;" in page  # indented JSON, not a Python dict
    for target in (
        f"/admin/approvals/approval/{parked.pk}/change/",
        f"/admin/runs/run/{parked.run_id}/change/",
        f"/admin/sessions_app/session/{parked.session_id}/change/",
        f"{PAGE}?run_id={parked.run_id}",
    ):
        assert target in page
        assert http.get(target).status_code == 200, target  # a compliance officer never lands on a 403


# --- export --------------------------------------------------------------------------------------


def test_the_export_is_the_filtered_set_on_every_page_and_is_audited(carl, parked):
    bulk_rows(250)
    http = admin_client(carl)
    response = post(http, f"{PAGE}export/?kind=verdict&p=2", {})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = rows_of(response)
    assert len(rows) == 251 and {row["kind"] for row in rows} == {"verdict"}
    export = AuditEvent.objects.filter(kind="export").get()
    assert (export.actor, export.data) == (
        "user:carl",
        {"list": "audit.AuditEvent", "scope": "filtered", "filter": {"kind": "verdict"}, "rows": 251},
    )


def test_the_export_writes_json_as_json_and_neutralises_formulas(carl, db):
    bulk_rows(1, patient_ref="=cmd|' /C calc'!A0", tool="+sum", op="-2", actor="@evil", decision="\tx", rule_id="\rr")
    row = rows_of(post(admin_client(carl), f"{PAGE}export/", {}))[-1]
    assert (row["patient_ref"], row["tool"], row["op"], row["actor"], row["decision"], row["rule_id"]) == (
        "'=cmd|' /C calc'!A0",
        "'+sum",
        "'-2",
        "'@evil",
        "'\tx",
        "⟨U+000D⟩r",
    )  # a carriage return is hidden: marked
    assert json.loads(row["details"]) == {"n": 1, "note": '=HYPERLINK("x")'}


def test_the_selected_rows_action_streams_and_is_audited(carl, parked):
    ids = list(AuditEvent.objects.values_list("pk", flat=True))
    response = post(admin_client(carl), PAGE, {"action": "export_csv", "_selected_action": ids})
    assert {int(row["id"]) for row in rows_of(response)} == set(ids)
    assert AuditEvent.objects.get(kind="export").data["ids"] == sorted(ids)


def test_exporting_100_000_rows_streams_in_flat_memory(carl, db):
    bulk_rows(100_000)
    response = post(admin_client(carl), f"{PAGE}export/", {})
    tracemalloc.start()
    size = lines = 0
    for chunk in response.streaming_content:
        size += len(chunk)
        lines += chunk.count(b"\n")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # The rows up to the export (a login's among them; the export's own row comes after it) and a header.
    assert lines == AuditEvent.objects.count()
    assert size > 15_000_000  # the whole file ...
    assert peak < 8_000_000  # ... never held at once (a page of rows at a time)


# --- cost ----------------------------------------------------------------------------------------


def test_past_the_threshold_the_list_says_many_without_counting_everything(carl, db, monkeypatch):
    monkeypatch.setattr(audit_admin, "COUNT_THRESHOLD", 50)
    bulk_rows(120)
    browser = admin_client(carl)  # signs in on the admin index (the dashboard's bounded counts): not measured
    with CaptureQueriesContext(connection) as queries:
        page = browser.get(PAGE).content.decode()
    assert "many audit events (about" in page
    counts = [q["sql"] for q in queries if "COUNT(" in q["sql"].upper()]
    assert counts and all("LIMIT 51" in sql for sql in counts), counts
    assert not [q["sql"] for q in queries if "DISTINCT" in q["sql"].upper()]


def test_the_changelist_runs_a_fixed_number_of_queries(carl, parked, django_assert_num_queries):
    http = admin_client(carl)
    http.get(PAGE)  # warm the content types cache
    bulk_rows(300)
    # session, user, permissions (the user's and the groups'), the tool, user and API client names of
    # the filter choices, the bounded count and the page of rows: nothing grows with the log.
    with django_assert_num_queries(9):
        assert http.get(PAGE, {"kind": "verdict"}).status_code == 200
