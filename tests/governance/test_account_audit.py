"""Every change to accounts, groups, permissions and API clients is an audit row with its actor (SPEC section 8).

In the admin (actor `user:…`) and on the command line (actor `command:…`), in the transaction
of the change: a change whose row cannot be written does not happen.
"""

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command

from agents.models import ApiClient, ApiClientKey
from audit import trail as audit
from audit.models import AuditEvent
from tests.helpers.admin_forms import admin_client, post, user_form, user_url
from tests.helpers.personas import PASSWORD, group


@pytest.fixture
def sam(db) -> User:
    return User.objects.create_superuser("sam", password=PASSWORD)


def account_rows() -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind="account").order_by("id"))


def test_flags_and_groups_changed_in_the_admin_are_audited_before_and_after(sam, rita):
    post(
        admin_client(sam),
        user_url(rita),
        user_form(rita, groups=[group("reviewers"), group("compliance")], is_staff=True),
    )
    (row,) = account_rows()
    assert (row.actor, row.actor_user, row.decision, row.data["user_id"]) == ("user:sam", sam, "updated", rita.pk)
    assert (row.data["before"]["groups"], row.data["after"]["groups"]) == (["reviewers"], ["compliance", "reviewers"])
    assert (row.data["before"]["is_staff"], row.data["after"]["is_staff"]) == (False, True)


def test_a_permission_given_to_an_account_is_audited(sam, rita):
    view_runs = Permission.objects.get(codename="view_run")
    post(admin_client(sam), user_url(rita), user_form(rita, permissions=[view_runs]))
    assert account_rows()[0].data["after"]["permissions"] == ["runs.view_run"]


def test_deleting_an_account_is_audited(sam, db):
    leaver = User.objects.create_user("leaver")
    assert post(admin_client(sam), user_url(leaver, "delete"), {"post": "yes"}).status_code == 302
    (row,) = account_rows()
    assert (row.decision, row.data["before"]["username"], row.data["after"]) == ("deleted", "leaver", None)


def test_a_password_set_by_an_admin_is_audited_without_the_password(sam, rita):
    new = "a new one for rita"
    response = post(
        admin_client(sam),
        user_url(rita, "password"),
        {"password1": new, "password2": new, "set_usable_password": "true"},
    )
    assert response.status_code == 302
    (row,) = account_rows()
    assert (row.actor, row.decision, row.data) == (
        "user:sam",
        "password_set",
        {"user_id": rita.pk, "username": "rita", "usable_password": True},
    )
    rita.refresh_from_db()
    assert rita.password not in str(row.data)


def test_a_group_whose_permissions_change_is_audited(sam, db):
    compliance = group("compliance")
    view_key = Permission.objects.get(codename="view_apiclientkey")
    form = {"name": "compliance", "permissions": [*compliance.permissions.values_list("pk", flat=True), view_key.pk]}
    post(admin_client(sam), f"/admin/auth/group/{compliance.pk}/change/", form)
    (row,) = account_rows()
    assert (row.data["group_id"], row.decision) == (compliance.pk, "updated")
    assert set(row.data["after"]["permissions"]) - set(row.data["before"]["permissions"]) == {
        "agents.view_apiclientkey"
    }


def test_an_account_change_whose_audit_row_fails_does_not_happen(sam, rita, monkeypatch):
    def refuse(*args, **kwargs):
        raise RuntimeError("the audit log is out of reach")

    http = admin_client(sam)
    http.raise_request_exception = False
    monkeypatch.setattr(audit, "record", refuse)
    post(http, user_url(rita), user_form(rita, is_staff=True))
    assert not User.objects.get(pk=rita.pk).is_staff


def test_create_reviewer_is_audited_as_the_command(db):
    call_command("create_reviewer", "nora", "--password", "night shift 42")
    call_command("create_reviewer", "nora", "--password", "day shift 43", "--group", "compliance")
    created, updated, password = account_rows()
    assert {created.actor, updated.actor, password.actor} == {"command:create_reviewer"}
    assert (created.decision, created.data["after"]["groups"]) == ("created", ["reviewers"])
    assert (updated.decision, updated.data["after"]["groups"]) == ("updated", ["compliance", "reviewers"])
    assert password.decision == "password_set"


def test_create_api_client_audits_the_client_and_its_key_without_the_key(db, capsys):
    call_command("create_api_client", "ward-7")
    key = capsys.readouterr().out.strip().splitlines()[-1]
    client_row, key_row = AuditEvent.objects.filter(kind="api_client").order_by("id")
    client = ApiClient.objects.get(name="ward-7")
    assert (client_row.actor, client_row.decision, client_row.data["client_id"]) == (
        "command:create_api_client",
        "created",
        str(client.pk),
    )
    assert client_row.data["after"] == {"name": "ward-7", "can_park": True}
    assert key_row.data["key_prefix"] == ApiClientKey.objects.get(client=client).prefix
    assert key not in str(key_row.data) and key.split(".")[1] not in str(key_row.data)


def test_the_demo_people_are_audited_as_seed_demo(db):
    from demo.management.commands.seed_demo import PEOPLE, Command

    for person in PEOPLE:
        Command()._person(*person)
    Command()._person(*PEOPLE[0])  # seeding again changes nothing, and writes nothing
    rows = account_rows()
    assert [row.data["after"]["username"] for row in rows] == [username for username, *_ in PEOPLE]
    assert {row.actor for row in rows} == {"command:seed_demo"}
