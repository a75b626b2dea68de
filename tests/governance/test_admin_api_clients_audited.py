"""Governance changing who may call the API is audited: API clients and their keys, in the admin.

A client's `can_park` decides whether its runs may wait for a human at all, and a key
lets a runtime act for the client; compliance reads every such change back from the
audit log, with the object before and after, and never the key or its hash.
"""

from agents.models import ApiClient, ApiClientKey
from audit.models import AuditEvent
from tests.helpers.personas import logged_in


def post_form(admin, url: str, fields: dict):
    return admin.post(url, {**fields, "csrfmiddlewaretoken": admin.cookies["csrftoken"].value})


def client_form(name: str, can_park: bool) -> dict:
    form = {"name": name, "keys-TOTAL_FORMS": "0", "keys-INITIAL_FORMS": "0"}
    if can_park:
        form["can_park"] = "on"
    return form


def rows() -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind="api_client").order_by("seq"))


def test_creating_and_changing_a_client_is_audited_with_before_and_after(gina):
    admin = logged_in(gina)
    assert post_form(admin, "/admin/agents/apiclient/add/", client_form("ward-bot", True)).status_code == 302
    client = ApiClient.objects.get(name="ward-bot")
    changed = post_form(admin, f"/admin/agents/apiclient/{client.pk}/change/", client_form("ward-bot", False))
    assert changed.status_code == 302

    created, updated = rows()
    assert (created.actor, created.decision, created.data["client_id"]) == ("user:gina", "created", str(client.pk))
    assert created.data["after"] == {"name": "ward-bot", "can_park": True}
    assert updated.decision == "updated"
    assert (updated.data["before"]["can_park"], updated.data["after"]["can_park"]) == (True, False)


def test_saving_a_client_unchanged_writes_no_row(gina):
    client = ApiClient.objects.create(name="ward-bot", can_park=True)
    admin = logged_in(gina)
    assert (
        post_form(admin, f"/admin/agents/apiclient/{client.pk}/change/", client_form("ward-bot", True)).status_code
        == 302
    )
    assert rows() == []


def test_issuing_and_revoking_a_key_is_audited_without_the_secret(gina):
    client = ApiClient.objects.create(name="ward-bot")
    admin = logged_in(gina)
    issued = post_form(admin, "/admin/agents/apiclientkey/add/", {"name": "prod", "client": str(client.pk)})
    assert issued.status_code == 302
    key = ApiClientKey.objects.get(client=client)
    revoked = post_form(
        admin,
        f"/admin/agents/apiclientkey/{key.pk}/change/",
        {"name": "prod", "client": str(client.pk), "revoked": "on"},
    )
    assert revoked.status_code == 302

    created, updated = rows()
    assert created.data["after"] == {
        "client": "ward-bot",
        "prefix": key.prefix,
        "name": "prod",
        "revoked": False,
        "expiry_date": None,
    }
    assert (updated.data["before"]["revoked"], updated.data["after"]["revoked"]) == (False, True)
    assert key.hashed_key not in str(created.data) + str(updated.data)


def test_governance_cannot_delete_a_client(gina):
    # Deleting a client would take its sessions' history with it: nobody does that from the admin.
    client = ApiClient.objects.create(name="ward-bot")
    admin = logged_in(gina)
    assert post_form(admin, f"/admin/agents/apiclient/{client.pk}/delete/", {"post": "yes"}).status_code == 403
    assert ApiClient.objects.filter(pk=client.pk).exists()
    assert rows() == []


def test_compliance_cannot_change_a_client(carl):
    client = ApiClient.objects.create(name="ward-bot", can_park=True)
    admin = logged_in(carl)
    refused = post_form(admin, f"/admin/agents/apiclient/{client.pk}/change/", client_form("ward-bot", False))
    assert refused.status_code == 403
    assert ApiClient.objects.get().can_park is True
    assert rows() == []
