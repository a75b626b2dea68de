"""The console's record pages (issue 10), tried as compliance would: each page for the right group,
patient_ref everywhere, ids searchable as shown, JSON readable and escaped, and no link to a 403."""

import re
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import Approval, ToolCall
from audit.models import AuditEvent
from runs.models import Run
from sessions_app.models import Session
from tests.governance.test_admin import admin_client, change_url, post
from tests.helpers.approval_loop import approve, gate, suspend
from tests.helpers.runs import open_executing_run

PATIENT = "MRN-30001"
EDITED = {"drug": "amoxicillin", "dose": "250 mg", "route": "oral", "days": 7}


@pytest.fixture
def cycle(api, catalog, reviewer_http) -> Approval:
    """One patient's run: a read, a prescription edited then approved by rita, a hostile string in the args."""
    run_id = open_executing_run(api, title="Bay 3", patient_ref=PATIENT)
    gate(
        api,
        run_id,
        tool="search_patients",
        op="",
        args={"name": "<script>alert(1)</script>"},
        tool_call_id="read-1",
        step_id="read-1",
    )
    approval = suspend(api, run_id, tool_call_id="call-2", step_id="step-2")
    approve(reviewer_http, approval["id"], edited_args=EDITED, reason="half the dose for her weight")
    open_executing_run(api, patient_ref="MRN-99999")  # someone else's session
    return Approval.objects.get(pk=approval["id"])


def page_links(html: str) -> set[str]:
    class Links(HTMLParser):
        found: set[str] = set()

        def handle_starttag(self, tag, attrs):
            href = dict(attrs).get("href")
            if tag == "a" and href and href.startswith("/admin/") and "logout" not in href:
                self.found.add(href)

    parser = Links()
    parser.found = set()
    parser.feed(html)
    return parser.found


def pages(approval: Approval) -> list[str]:
    call = ToolCall.objects.get(run=approval.run, tool_call_id="call-2")
    return [
        "/admin/",
        "/admin/approvals/approval/",
        change_url(approval),
        "/admin/approvals/toolcall/",
        change_url(call),
        "/admin/runs/run/",
        change_url(approval.run),
        "/admin/runs/runevent/",
        "/admin/sessions_app/session/",
        change_url(approval.session),
        "/admin/audit/auditevent/",
        "/admin/registry/tooldescriptor/",
        "/admin/registry/toolchange/",
        "/admin/registry/tooldescriptor/simulator/",
    ]


# --- each page for the right group -----------------------------------------------------------


@pytest.mark.parametrize("persona", ["carl", "gina"])
def test_compliance_and_governance_read_every_console_page(request, persona, cycle):
    http = admin_client(request.getfixturevalue(persona))
    for url in pages(cycle):
        assert http.get(url).status_code == 200, url


def test_a_reviewer_is_refused_every_console_page(rita, cycle):
    http = admin_client(rita)
    for url in pages(cycle):
        response = http.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url


@pytest.mark.parametrize(
    ("url", "carl_status", "gina_status"),
    [
        ("/admin/registry/tooldescriptor/add/", 403, 200),
        ("/admin/agents/apiclient/add/", 403, 200),
        ("/admin/agents/apiclientkey/", 403, 200),
        ("/admin/registry/toolchange/add/", 403, 403),
    ],
)
def test_only_governance_edits_the_registry_and_api_clients(carl, gina, db, url, carl_status, gina_status):
    assert admin_client(carl).get(url).status_code == carl_status
    assert admin_client(gina).get(url).status_code == gina_status


def test_nobody_edits_an_approval_run_or_session_in_the_admin(gina, cycle):
    http = admin_client(gina)
    for obj in (cycle, cycle.run, cycle.session):
        assert post(http, change_url(obj), {}).status_code == 403


# --- links never land on a 403 ---------------------------------------------------------------


def test_every_link_compliance_can_follow_from_the_console_opens(carl, cycle):
    http = admin_client(carl)
    seen = set()
    for url in pages(cycle):
        for link in page_links(http.get(url).content.decode()) - seen:
            seen.add(link)
            assert http.get(link).status_code == 200, f"{link} (linked from {url})"
    assert any("/admin/audit/auditevent/?approval_id=" in link for link in seen)


def test_decided_by_is_a_name_not_a_link_to_the_user_admin(carl, cycle):
    html = admin_client(carl).get(change_url(cycle)).content.decode()
    assert "rita" in html
    assert "/admin/auth/user/" not in html


# --- patient_ref, ids and times --------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["/admin/approvals/approval/", "/admin/approvals/toolcall/", "/admin/runs/run/", "/admin/sessions_app/session/"],
)
def test_the_pages_show_and_search_by_patient_ref(carl, cycle, url):
    response = admin_client(carl).get(url, {"q": PATIENT})
    assert response.status_code == 200
    rows = list(response.context["cl"].result_list)
    assert rows and PATIENT.encode() in response.content
    assert b"MRN-99999" not in response.content


@pytest.mark.parametrize(
    ("url", "ids"),
    [
        ("/admin/approvals/approval/", lambda a: [a.pk, a.run_id, a.session_id]),
        ("/admin/approvals/toolcall/", lambda a: [a.run_id, a.session_id]),
        ("/admin/runs/run/", lambda a: [a.run_id, a.session_id]),
        ("/admin/runs/runevent/", lambda a: [a.run_id]),
        ("/admin/sessions_app/session/", lambda a: [a.session_id]),
    ],
)
def test_an_id_pasted_as_shown_with_dashes_finds_its_rows(carl, cycle, url, ids):
    http = admin_client(carl)
    for value in ids(cycle):
        with CaptureQueriesContext(connection) as queries:
            response = http.get(url, {"q": str(value)})
        assert response.status_code == 200 and response.context["cl"].result_count >= 1, (url, value)
        # Compared as a UUID (an index lookup), not as text: Django's text cast finds nothing
        # on SQLite (32 hex digits, no dashes) and scans the table on PostgreSQL.
        assert not any("::varchar" in q["sql"] or "AS text" in q["sql"] for q in queries), url
    # A word that is not an id searches the text fields and never breaks a UUID comparison.
    assert http.get(url, {"q": "not-a-uuid ward"}).status_code == 200


def test_times_are_shown_to_the_second(carl, cycle):
    html = admin_client(carl).get("/admin/approvals/approval/").content.decode()
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", html)


def test_an_approval_shows_its_time_to_decision(carl, cycle):
    response = admin_client(carl).get("/admin/approvals/approval/", {"q": str(cycle.pk)})
    assert re.search(r"<td class=\"field-time_to_decision\">\d+ (s|min)", response.content.decode())


# --- JSON, edits and escaping ----------------------------------------------------------------


def test_args_are_pretty_json_and_the_reviewers_edit_is_a_diff(carl, cycle):
    html = admin_client(carl).get(change_url(cycle)).content.decode()
    assert "&quot;dose&quot;: &quot;500 mg&quot;" in html  # JSON (double quotes), not a Python repr
    assert '<span class="condor-diff-removed">-   &quot;dose&quot;: &quot;500 mg&quot;,</span>' in html
    assert '<span class="condor-diff-added">+   &quot;dose&quot;: &quot;250 mg&quot;,</span>' in html


def test_agent_strings_are_escaped_everywhere(carl, cycle):
    call = ToolCall.objects.get(tool_call_id="read-1")
    http = admin_client(carl)
    for url in (change_url(call), change_url(call.run), "/admin/approvals/toolcall/"):
        html = http.get(url).content.decode()
        assert "<script>alert(1)</script>" not in html, url
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in http.get(change_url(call)).content.decode()


# --- runs, sessions, audit links -------------------------------------------------------------


def test_a_run_shows_its_event_timeline_in_order(carl, cycle):
    run = Run.objects.get(pk=cycle.run_id)
    html = admin_client(carl).get(change_url(run)).content.decode()
    kinds = list(run.events.order_by("id").values_list("kind", flat=True))
    assert kinds
    positions = [html.index(f"<code>{kind}</code>") for kind in dict.fromkeys(kinds)]
    assert positions == sorted(positions)


def test_a_tainted_session_says_so_and_links_its_runs_and_approvals(carl, cycle):
    session = Session.objects.get(pk=cycle.session_id)
    session.mark_tainted()
    html = admin_client(carl).get(change_url(session)).content.decode()
    assert "untrusted content entered this session" in html
    assert f"/admin/runs/run/?session__id__exact={session.pk}" in html
    assert f"/admin/approvals/approval/?session__id__exact={session.pk}" in html


def test_the_audit_link_of_an_approval_lists_exactly_its_audit_rows(carl, cycle):
    response = admin_client(carl).get("/admin/audit/auditevent/", {"approval_id": str(cycle.pk)})
    shown = {row.pk for row in response.context["cl"].result_list}
    assert shown == set(AuditEvent.objects.filter(approval_id=cycle.pk).values_list("pk", flat=True))
    assert shown
