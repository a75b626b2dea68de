"""Finding a call by what it asked for (SPEC section 8): the approvals, tool calls and audit pages search the
call's arguments ("amoxicillin", "500 mg") and show its leading values, for compliance, governance and admins."""

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import Approval, ToolCall
from audit.models import AuditEvent
from core.admin_display import leading_values
from governance import audit_search
from tests.governance.test_admin import admin_client, change_url, sam  # noqa: F401 - sam: a superuser
from tests.helpers.approval_loop import approve, report, resume, suspend
from tests.helpers.runs import open_executing_run

APPROVALS = "/admin/approvals/approval/"
TOOL_CALLS = "/admin/approvals/toolcall/"
AUDIT = "/admin/audit/auditevent/"
AMOXICILLIN_500 = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}


@pytest.fixture
def ward(api, catalog, reviewer_http) -> dict[str, Approval]:
    """Two patients' prescriptions: amoxicillin 500 mg for MRN-20417 (approved as 250 mg), gentamicin for the same
    patient, and amoxicillin 500 mg for MRN-30001 (pending)."""
    first = open_executing_run(api, patient_ref="MRN-20417")
    amoxicillin = suspend(api, first, args={**AMOXICILLIN_500, "patient_ref": "MRN-20417"})
    approve(
        reviewer_http, amoxicillin["id"], edited_args={**AMOXICILLIN_500, "patient_ref": "MRN-20417", "dose": "250 mg"}
    )
    gentamicin = suspend(
        api, first, args={"drug": "gentamicin", "dose_mg_per_kg": 5}, tool_call_id="call-2", step_id="step-2"
    )
    other = suspend(api, open_executing_run(api, patient_ref="MRN-30001"), args=AMOXICILLIN_500)
    return {
        name: Approval.objects.get(pk=approval["id"])
        for name, approval in (("amoxicillin", amoxicillin), ("gentamicin", gentamicin), ("other", other))
    }


def found(http, url, q) -> set:
    response = http.get(url, {"q": q})
    assert response.status_code == 200
    return {row.pk for row in response.context["cl"].result_list}


def audit_rows_of(*approvals) -> set[int]:
    return set(AuditEvent.objects.filter(approval_id__in=[a.pk for a in approvals]).values_list("pk", flat=True))


# --- the call's leading values -----------------------------------------------------------------


def test_leading_values_put_text_first_and_give_numbers_their_key():
    assert leading_values({"days": 7, "drug": "amoxicillin", "dose_mg": 500, "route": "oral"}) == (
        "amoxicillin · oral · days 7 · dose_mg 500"
    )


def test_leading_values_leave_out_what_the_row_shows_and_nested_values():
    args = {"patient_ref": "MRN-20417", "drug": "warfarin", "schedule": {"mon": 5}, "flags": [1], "note": None}
    assert leading_values(args, shown=("MRN-20417",)) == "warfarin"


def test_leading_values_are_short():
    assert leading_values({f"k{i}": f"value {i}" for i in range(9)}).endswith("value 5 · …")
    line = leading_values({"note": "x" * 500, "more": "y" * 500, "again": "z" * 500})
    assert len(line) <= 100 and line.endswith("…")


@pytest.mark.parametrize(("url", "model"), [(APPROVALS, Approval), (TOOL_CALLS, ToolCall)])
def test_a_list_row_shows_the_calls_leading_values(carl, ward, url, model):
    html = admin_client(carl).get(url, {"q": "MRN-30001"}).content.decode()
    # PostgreSQL's jsonb keeps the shortest key first: days, dose, drug, route.
    assert '<td class="field-args_summary">500 mg · amoxicillin · oral · days 7</td>' in html


def test_the_leading_values_mark_hidden_and_right_to_left_characters(api, catalog, carl):
    suspend(api, open_executing_run(api), args={"drug": "amoxicillin\u202e", "dose": "\u0640 2.5 / 25 \u0640"})
    html = admin_client(carl).get(APPROVALS).content.decode()
    cell = re.search(r'<td class="field-args_summary">(.*?)</td>', html).group(1)
    assert "\u202e" not in cell and "⟨U+202E⟩" in cell
    assert cell.count('class="reveal reveal--rtl" dir="ltr"') == 2


# --- the approvals and tool calls pages --------------------------------------------------------


@pytest.mark.parametrize("persona", ["carl", "gina", "sam"])
def test_the_approvals_list_finds_a_drug_in_the_arguments(request, persona, ward):
    http = admin_client(request.getfixturevalue(persona))
    assert found(http, APPROVALS, "amoxicillin") == {ward["amoxicillin"].pk, ward["other"].pk}
    assert found(http, APPROVALS, "Gentamicin") == {ward["gentamicin"].pk}


def test_every_word_of_the_search_must_match(carl, ward):
    assert found(admin_client(carl), APPROVALS, 'amoxicillin "500 mg" MRN-20417') == {ward["amoxicillin"].pk}


def test_the_tool_calls_list_finds_a_drug_in_the_arguments(carl, ward):
    shown = found(admin_client(carl), TOOL_CALLS, "gentamicin")
    assert shown == set(ToolCall.objects.filter(tool_call_id="call-2").values_list("pk", flat=True))


def test_a_search_of_too_many_words_says_so_and_lists_nothing(carl, ward):
    response = admin_client(carl).get(APPROVALS, {"q": " ".join(["amoxicillin"] * 9)}, follow=True)
    assert list(response.context["cl"].result_list) == []
    assert "at most 8 words" in response.content.decode()


def test_the_approvals_list_runs_as_many_queries_for_many_rows_as_for_few(api, catalog, carl, ward):
    http = admin_client(carl)
    with CaptureQueriesContext(connection) as few:
        http.get(APPROVALS, {"q": "amoxicillin"})
    for _ in range(5):
        suspend(api, open_executing_run(api), args=AMOXICILLIN_500)
    with CaptureQueriesContext(connection) as many:
        http.get(APPROVALS, {"q": "amoxicillin"})
    assert len(many) == len(few)


# --- from an approval to what happened -----------------------------------------------------------


def test_the_approval_page_says_what_the_agent_did_with_the_call(api, carl, ward):
    approval = ward["amoxicillin"]
    http = admin_client(carl)
    assert "no result reported" in http.get(change_url(approval)).content.decode()
    assert resume(api, approval.run_id, approval.pk, approval.approved_args).status_code == 200
    assert report(api, approval.run_id, approval.tool_call_id, {"order": "rx-1"}).status_code == 200
    html = http.get(change_url(approval)).content.decode()
    call = ToolCall.objects.get(run_id=approval.run_id, tool_call_id=approval.tool_call_id)
    assert f'<a href="{change_url(call)}">{call.tool_call_id}</a> (ran, result reported' in html
    assert f"{AUDIT}?approval_id={approval.pk}" in html


# --- the audit log, through the approval -------------------------------------------------------


@pytest.mark.parametrize("persona", ["carl", "gina", "sam"])
def test_the_audit_log_finds_the_rows_of_the_approvals_whose_arguments_hold_a_word(request, persona, ward):
    http = admin_client(request.getfixturevalue(persona))
    assert found(http, AUDIT, "amoxicillin") == audit_rows_of(ward["amoxicillin"], ward["other"])


def test_the_audit_words_combine_a_patient_and_a_dose(carl, ward):
    assert found(admin_client(carl), AUDIT, 'MRN-20417 amoxicillin "500 mg"') == audit_rows_of(ward["amoxicillin"])


def test_the_audit_log_still_matches_its_own_columns_exactly(carl, ward):
    http = admin_client(carl)
    rows = set(AuditEvent.objects.filter(actor="user:rita").values_list("pk", flat=True))
    assert rows and found(http, AUDIT, "user:rita") == rows
    assert found(http, AUDIT, "user:rit") == set()  # an actor is matched whole, not as a prefix


def test_an_audit_row_shows_its_approvals_arguments(carl, ward):
    html = admin_client(carl).get(AUDIT, {"q": "gentamicin"}).content.decode()
    assert '<td class="field-approval_args">gentamicin · dose_mg_per_kg 5</td>' in html
    row = AuditEvent.objects.filter(approval_id=ward["gentamicin"].pk).first()
    assert "&quot;dose_mg_per_kg&quot;: 5" in admin_client(carl).get(f"{AUDIT}{row.pk}/change/").content.decode()


def test_a_reader_of_the_log_who_may_not_read_approvals_gets_neither_their_arguments_nor_that_search(ward):
    auditor = User.objects.create(username="aude", is_staff=True)
    auditor.user_permissions.add(Permission.objects.get(codename="view_auditevent"))
    http = admin_client(auditor)
    assert found(http, AUDIT, "amoxicillin") == set()
    assert "field-approval_args" not in http.get(AUDIT).content.decode()


def test_past_the_bound_the_newest_approvals_rows_are_listed_and_the_page_says_so(carl, ward, monkeypatch):
    monkeypatch.setattr(audit_search, "APPROVALS_AT_MOST", 1)
    response = admin_client(carl).get(AUDIT, {"q": "amoxicillin"})
    assert {row.pk for row in response.context["cl"].result_list} == audit_rows_of(ward["other"])
    assert "More than 1 approvals match" in response.content.decode()


def test_the_audit_search_reads_the_log_by_its_indexes_in_a_fixed_number_of_queries(carl, ward, api):
    http = admin_client(carl)
    with CaptureQueriesContext(connection) as few:
        http.get(AUDIT, {"q": "amoxicillin MRN-20417"})
    for _ in range(5):
        suspend(api, open_executing_run(api, patient_ref="MRN-20417"), args=AMOXICILLIN_500)
    with CaptureQueriesContext(connection) as many:
        http.get(AUDIT, {"q": "amoxicillin MRN-20417"})
    assert len(many) == len(few)
    # The arguments' text is read on the approvals table only: the log is matched by approval_id.
    log = [q["sql"] for q in many if 'FROM "approvals_auditevent"' in q["sql"]]
    assert log and not [sql for sql in log if "UPPER(" in sql]


def test_an_id_pasted_into_the_audit_search_needs_no_approvals_lookup(carl, ward, monkeypatch):
    def looked_up(words):
        raise AssertionError(f"approvals looked up for {words}")

    monkeypatch.setattr(audit_search, "approvals_matching", looked_up)
    approval = ward["amoxicillin"]
    assert found(admin_client(carl), AUDIT, f"{approval.run_id} {approval.pk}") == audit_rows_of(approval)
