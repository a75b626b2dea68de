"""The admin (SPEC section 8): compliance reads everything, governance edits the registry, audit is forever."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from agents.models import ApiClientKey
from approvals.models import Approval, QuickReason, ReviewTeam
from audit.models import AuditEvent
from governance import access_grants
from registry import changes as registry_changes
from registry.models import ToolDescriptor
from tests.helpers.admin_forms import admin_client, post  # noqa: F401 - other admin tests import them from here
from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run

TOOL_FORM = {
    "description": "",
    "policy_class": "mutate",
    "hitl_tier": "low",
    "trust": "trusted",
    "allowed_hosts": "[]",
    "metadata": "{}",
    "approvals_required": "1",
    "_save": "Save",
}


@pytest.fixture
def sam(db) -> User:
    return User.objects.create_superuser("sam", password="correct horse battery")


@pytest.fixture
def tool(catalog) -> ToolDescriptor:
    return ToolDescriptor.objects.get(name="prescribe_medication")


@pytest.fixture
def history(api, catalog) -> str:
    """One run with an allowed call and a parked one, and a failed sign-in: a row in every admin table.

    Returns the run id.
    """
    run_id = open_executing_run(api, title="Ward 3, bed 4")
    assert gate(api, run_id, tool="search_patients", op="", args={"name": "Ada"}).status_code == 200
    assert gate(api, run_id, tool_call_id="call-2", step_id="step-2").status_code == 202
    proposer = User.objects.create_superuser("pat", password="correct horse battery")
    assert registry_changes.submit("prescribe_medication", {"hitl_tier": "low"}, user=proposer).change
    # A failed sign-in: the login lockout's rows (django-axes) are in the admin too.
    assert Client().post("/accounts/login/", {"username": "mallory", "password": "guess"}).status_code == 200
    ReviewTeam.objects.create(name="Ward 3", care_units=["W3"]).members.set([proposer])
    QuickReason.objects.create(text="Duplicate of an existing order")
    newcomer = User.objects.create_user("newcomer")
    access_grants.propose(access_grants.Elevation(superuser=True), by=proposer, user=newcomer)
    return run_id


def change_url(obj) -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"


# --- compliance: read-only -------------------------------------------------------------------


def test_compliance_can_read_the_audit_log(carl, history):
    response = admin_client(carl).get("/admin/audit/auditevent/")
    assert response.status_code == 200
    assert b"mutate.high-tier-always-approval" in response.content


def test_compliance_cannot_change_a_tool_descriptor(carl, tool):
    response = post(admin_client(carl), change_url(tool), {**TOOL_FORM, "hitl_tier": "low"})
    assert response.status_code == 403
    tool.refresh_from_db()
    assert tool.hitl_tier == "high"


def test_compliance_cannot_add_a_tool_descriptor(carl, db):
    assert admin_client(carl).get("/admin/registry/tooldescriptor/add/").status_code == 403


def test_compliance_cannot_see_api_keys(carl, db):
    assert admin_client(carl).get("/admin/agents/apiclientkey/").status_code == 403


def test_compliance_can_export_the_audit_log_as_csv(carl, history):
    ids = [str(pk) for pk in AuditEvent.objects.values_list("pk", flat=True)]
    response = post(admin_client(carl), "/admin/audit/auditevent/", {"action": "export_csv", "_selected_action": ids})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "mutate.high-tier-always-approval" in b"".join(response.streaming_content).decode()


def test_a_reviewer_is_not_let_into_the_admin(rita):
    response = admin_client(rita).get("/admin/audit/auditevent/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


# --- governance: the registry ----------------------------------------------------------------


def test_governance_changes_a_tool_descriptor_and_the_change_is_audited(gina, catalog):
    # Raising the risk applies at once (lowering it needs four eyes: tests/registry/test_registry_four_eyes.py).
    tool = ToolDescriptor.objects.get(name="record_vitals")
    response = post(admin_client(gina), change_url(tool), {**TOOL_FORM, "hitl_tier": "high"})
    assert response.status_code == 302
    tool.refresh_from_db()
    assert tool.hitl_tier == "high"
    change = AuditEvent.objects.filter(kind=AuditEvent.Kind.REGISTRY_CHANGE, tool=tool.name).latest("id")
    assert (change.decision, change.actor_user, change.actor) == ("updated", gina, "user:gina")
    assert (change.data["before"]["hitl_tier"], change.data["after"]["hitl_tier"]) == ("low", "high")


def test_governance_adds_a_tool_descriptor_and_it_is_audited(gina, db):
    response = post(
        admin_client(gina),
        "/admin/registry/tooldescriptor/add/",
        {**TOOL_FORM, "name": "amend_allergy", "hitl_tier": "high", "metadata": '{"ward": "4"}'},
    )
    assert response.status_code == 302
    assert ToolDescriptor.objects.get(name="amend_allergy").metadata == {"ward": "4"}
    change = AuditEvent.objects.get(kind=AuditEvent.Kind.REGISTRY_CHANGE, tool="amend_allergy")
    assert (change.decision, change.actor_user) == ("created", gina)


def test_the_admin_refuses_a_mutate_tool_without_a_tier_in_words(gina, tool):
    http = admin_client(gina)
    audited = AuditEvent.objects.count()
    response = post(http, change_url(tool), {**TOOL_FORM, "hitl_tier": ""})
    assert response.status_code == 200  # the form again, with the error
    assert b"A mutate tool must declare its HITL tier" in response.content
    tool.refresh_from_db()
    assert tool.hitl_tier == "high"
    assert AuditEvent.objects.count() == audited


def test_the_admin_refuses_tool_metadata_nested_past_the_limit_as_a_form_error(gina, tool):
    http = admin_client(gina)
    audited, metadata = AuditEvent.objects.count(), tool.metadata
    deep = '{"a": ' * 2000 + "1" + "}" * 2000
    response = post(http, change_url(tool), {**TOOL_FORM, "metadata": deep})
    assert response.status_code == 200  # the form again, with the error and the text as typed
    assert b"nested deeper than" in response.content and b"{&quot;a&quot;: {&quot;a&quot;" in response.content
    tool.refresh_from_db()
    assert tool.metadata == metadata
    assert AuditEvent.objects.count() == audited


def test_governance_cannot_delete_a_tool_descriptor(gina, tool):
    response = post(admin_client(gina), f"/admin/registry/tooldescriptor/{tool.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert ToolDescriptor.objects.filter(pk=tool.pk).exists()


def test_governance_can_read_runs_but_not_change_them(gina, history):
    http = admin_client(gina)
    assert http.get("/admin/runs/run/").status_code == 200
    assert http.get(f"/admin/runs/run/{history}/change/").status_code == 200
    assert post(http, f"/admin/runs/run/{history}/change/", {"state": "completed"}).status_code == 403


# --- nobody deletes audit rows ---------------------------------------------------------------


def test_not_even_a_superuser_can_delete_an_audit_event(sam, history):
    event = AuditEvent.objects.first()
    http = admin_client(sam)
    assert post(http, f"/admin/audit/auditevent/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    post(http, "/admin/audit/auditevent/", {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"})
    assert AuditEvent.objects.filter(pk=event.pk).exists()


def test_the_audit_changelist_offers_no_delete_action(sam, history):
    response = admin_client(sam).get("/admin/audit/auditevent/")
    assert b"delete_selected" not in response.content
    assert b"export_csv" in response.content


def test_a_superuser_cannot_edit_an_approval(sam, history):
    approval = Approval.objects.get()
    response = post(admin_client(sam), change_url(approval), {"status": "approved"})
    assert response.status_code == 403
    approval.refresh_from_db()
    assert approval.status == "pending"


# --- API keys, the library's way -------------------------------------------------------------


def test_a_key_created_in_the_admin_is_shown_once_and_works(sam, ward_agent):
    http = admin_client(sam)
    shown = http.post(
        "/admin/agents/apiclientkey/add/",
        {  # the page after saving shows it...
            "name": "ward-agent spare",
            "client": ward_agent.pk,
            "expiry_date": "",
            "_save": "Save",
            "csrfmiddlewaretoken": http.cookies["csrftoken"].value,
        },
        follow=True,
    )
    message = next(str(m) for m in shown.context["messages"])
    key = message.split("The API key for ward-agent spare is: ")[1].split(". ")[0]
    assert key.encode() in shown.content
    assert key.encode() not in http.get("/admin/agents/apiclientkey/").content  # ...and never again
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    assert agent.get("/api/v1/sessions/").status_code == 200
    assert ApiClientKey.objects.get(name="ward-agent spare").client == ward_agent


# --- everything renders ----------------------------------------------------------------------


@pytest.mark.parametrize("model", list(admin.site._registry), ids=lambda model: model._meta.label)
def test_every_changelist_and_change_page_renders_for_a_superuser(sam, history, model):
    http = admin_client(sam)
    opts = model._meta
    assert http.get(f"/admin/{opts.app_label}/{opts.model_name}/").status_code == 200
    assert http.get(f"/admin/{opts.app_label}/{opts.model_name}/", {"q": history}).status_code == 200
    row = model.objects.first()
    assert row is not None, f"the history fixture left no {opts.label} row"
    assert http.get(change_url(row)).status_code == 200
