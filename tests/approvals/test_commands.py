"""Management commands (SPEC section 9): create_api_client, create_reviewer, register_tool."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.management import CommandError, call_command
from django.test import RequestFactory
from rest_framework.test import APIClient

from agents.models import ApiClient
from audit.models import AuditEvent
from demo.management.commands import seed_demo
from registry.models import ToolDescriptor
from tests.helpers.personas import PASSWORD


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def log_in(username, password):
    # The login lockout (django-axes) needs the request a sign-in comes with.
    return authenticate(RequestFactory().post("/accounts/login/"), username=username, password=password)


def registry_changes():
    return AuditEvent.objects.filter(kind=AuditEvent.Kind.REGISTRY_CHANGE)


# --- groups -----------------------------------------------------------------------------------


def test_the_three_groups_exist_after_migrations(db):
    assert set(Group.objects.values_list("name", flat=True)) >= {"reviewers", "compliance", "governance"}


# --- create_api_client ------------------------------------------------------------------------


def test_create_api_client_prints_a_key_that_authenticates(db):
    key = run("create_api_client", "ward-7").strip().splitlines()[-1]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    assert api.get("/api/v1/sessions/").status_code == 200
    assert api.post("/api/v1/sessions/", {"title": "Bed 4"}, format="json").status_code == 201
    assert ApiClient.objects.get(name="ward-7").sessions.count() == 1


def test_create_api_client_can_park_by_default(db):
    run("create_api_client", "ward-7")
    assert ApiClient.objects.get(name="ward-7").can_park is True


def test_create_api_client_cannot_park_with_the_flag(db):
    run("create_api_client", "batch-job", "--cannot-park")
    assert ApiClient.objects.get(name="batch-job").can_park is False


def test_create_api_client_refuses_a_duplicate_name(db):
    run("create_api_client", "ward-7")
    with pytest.raises(CommandError, match="already exists"):
        run("create_api_client", "ward-7")
    assert ApiClient.objects.get(name="ward-7").keys.count() == 1


# --- create_reviewer --------------------------------------------------------------------------


def test_create_reviewer_makes_a_reviewer_who_can_log_in(db):
    run("create_reviewer", "nora", "--password", "night shift 42")
    nora = User.objects.get(username="nora")
    assert list(nora.groups.values_list("name", flat=True)) == ["reviewers"]
    assert not nora.is_staff  # reviewers work in the inbox, not the admin
    assert log_in("nora", password="night shift 42") == nora


@pytest.mark.parametrize("group", ["compliance", "governance"])
def test_compliance_and_governance_users_are_staff(db, group):
    run("create_reviewer", "olga", "--password", "audit all day", "--group", group)
    olga = User.objects.get(username="olga")
    assert olga.is_staff and not olga.is_superuser
    assert olga.groups.filter(name=group).exists()


def test_create_reviewer_again_resets_the_password(db):
    run("create_reviewer", "nora", "--password", "night shift 42")
    run("create_reviewer", "nora", "--password", "day shift 43")
    assert log_in("nora", password="night shift 42") is None
    assert log_in("nora", password="day shift 43") is not None
    assert User.objects.filter(username="nora").count() == 1


@pytest.mark.parametrize(
    "password, reason",
    [
        ("short1", "too short"),
        ("password123", "too common"),
        ("4815162342", "entirely numeric"),
    ],
)
def test_create_reviewer_refuses_a_weak_password(db, password, reason):
    with pytest.raises(CommandError, match=f"Password refused for 'nora'.*{reason}"):
        run("create_reviewer", "nora", "--password", password)
    assert not User.objects.filter(username="nora").exists()


def test_create_reviewer_refuses_a_password_like_the_username(db):
    with pytest.raises(CommandError, match="too similar to the username"):
        run("create_reviewer", "florence.nightingale", "--password", "nightingale!")
    assert not User.objects.filter(username="florence.nightingale").exists()


def test_create_reviewer_refuses_a_weak_new_password_and_keeps_the_old_one(db):
    run("create_reviewer", "nora", "--password", "night shift 42")
    with pytest.raises(CommandError, match="too common"):
        run("create_reviewer", "nora", "--password", "password123")
    assert log_in("nora", "night shift 42") is not None


@pytest.mark.parametrize(
    "username, password",
    [
        *[(username, password) for username, password, _, _ in seed_demo.PEOPLE],
        ("rita", PASSWORD),  # the test personas'
    ],
)
def test_the_demo_and_test_passwords_pass_the_validators(db, username, password):
    validate_password(password, User(username=username))  # raises if refused


def test_create_reviewer_refuses_an_unknown_group(db):
    with pytest.raises(CommandError):
        run("create_reviewer", "nora", "--password", "night shift 42", "--group", "admins")
    assert not User.objects.filter(username="nora").exists()


# --- register_tool ----------------------------------------------------------------------------


def test_register_tool_creates_a_descriptor_and_audits_it(db):
    # A new tool the gate would never allow applies at once (one that it would allow
    # needs four eyes: tests/registry/test_registry_four_eyes.py).
    run("register_tool", "fax_letter", "--class", "comms", "--trust", "untrusted", "--description", "Fax")
    tool = ToolDescriptor.objects.get(name="fax_letter")
    assert (tool.policy_class, tool.trust, tool.description) == ("comms", "untrusted", "Fax")
    change = registry_changes().get()
    assert (change.tool, change.decision) == ("fax_letter", "created")


def test_register_tool_updates_an_existing_descriptor(db):
    run("register_tool", "amend_allergy", "--class", "mutate", "--tier", "high")
    run("register_tool", "amend_allergy", "--class", "exec")
    tool = ToolDescriptor.objects.get(name="amend_allergy")
    assert (tool.policy_class, tool.hitl_tier) == ("exec", "high")
    assert list(registry_changes().order_by("id").values_list("decision", flat=True)) == ["created", "updated"]


def test_register_tool_refuses_a_mutate_tool_without_a_tier(db):
    with pytest.raises(CommandError, match="tier"):
        run("register_tool", "amend_allergy", "--class", "mutate")
    assert not ToolDescriptor.objects.exists()
    assert not registry_changes().exists()


def test_register_tool_mutating_flag_keeps_other_metadata(db):
    ToolDescriptor.objects.create(name="legacy_write", metadata={"vendor": "acme"})
    run("register_tool", "legacy_write", "--mutating")
    assert ToolDescriptor.objects.get(name="legacy_write").metadata == {"vendor": "acme", "mutating": True}


def test_register_tool_refuses_an_unknown_class(db):
    with pytest.raises(CommandError):
        run("register_tool", "anything", "--class", "write")
    assert not ToolDescriptor.objects.exists()
