"""Personas shared by the whole suite.

- `ward_agent`: the owner client, an agent runtime on a hospital ward (its key in `api`).
- `other_agent`: another client; its key (`other_api`) must see none of the owner's objects.
- `rita`: a clinical reviewer (logged in through `reviewer_http`, CSRF enforced).
- `carl`: a compliance officer; `gina`: a governance admin.
"""

import functools

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.test import APIClient

from approvals.models import ApiClient, ApiClientKey
from approvals.registry import seed_static_catalog

pytest_plugins = ["tests.ci_skips"]


def _agent(name: str, *, can_park: bool = True):
    client = ApiClient.objects.create(name=name, can_park=can_park)
    _, key = ApiClientKey.objects.create_key(name=f"{name} key", client=client)
    client.raw_key = key
    return client


def _api_for(client) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {client.raw_key}")
    return api


PASSWORD = "correct horse battery"


@functools.cache
def _password_hash() -> str:
    # Hashed once per run: the real (slow on purpose) hasher, so a live server in
    # another process can still verify a login, without paying for it per persona.
    return make_password(PASSWORD)


def _person(username: str, group: str) -> User:
    # As `create_reviewer` makes them: compliance and governance work in the admin.
    user = User.objects.create(username=username, password=_password_hash(),
                               is_staff=group in ("compliance", "governance"))
    user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def catalog(db):
    seed_static_catalog()


@pytest.fixture
def ward_agent(db):
    return _agent("ward-agent")


@pytest.fixture
def other_agent(db):
    return _agent("other-agent")


@pytest.fixture
def api(ward_agent) -> APIClient:
    return _api_for(ward_agent)


@pytest.fixture
def other_api(other_agent) -> APIClient:
    return _api_for(other_agent)


@pytest.fixture
def rita(db) -> User:
    return _person("rita", "reviewers")


@pytest.fixture
def rob(db) -> User:
    """A second reviewer: review teams, claims and four eyes need two."""
    return _person("rob", "reviewers")


@pytest.fixture
def carl(db) -> User:
    return _person("carl", "compliance")


@pytest.fixture
def gina(db) -> User:
    return _person("gina", "governance")


def logged_in(user) -> Client:
    """A browser-like client: Django session login, CSRF checks enforced as in production."""
    http = Client(enforce_csrf_checks=True)
    http.force_login(user)
    http.get("/inbox/")  # sets the csrftoken cookie like the inbox page does
    return http


@pytest.fixture
def reviewer_http(rita) -> Client:
    return logged_in(rita)


@pytest.fixture(autouse=True, scope="session")
def _isolated_channel_layer():
    """Test runs sharing one Redis must not hear each other's inbox pushes."""
    import os

    from channels.layers import channel_layers
    from django.conf import settings

    layer = settings.CHANNEL_LAYERS["default"]
    if "prefix" in layer.get("CONFIG", {}):
        layer["CONFIG"]["prefix"] = f"condor-test-{os.getpid()}"
        channel_layers.backends.clear()
    yield


def _flush_past_the_audit_triggers():
    """Between transactional tests Django empties every table with TRUNCATE, which the audit
    log's triggers refuse (from anyone, owner included). The test database's owner turns
    them off for that one flush transaction, as only an owner can; production never flushes.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.sql_flush
    guarded = ("approvals_auditevent", "approvals_auditchainhead")

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = original(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        tables_here = [table for table in guarded if table in tables]
        if not statements or not tables_here:
            return statements
        return [*(f"ALTER TABLE {table} DISABLE TRIGGER USER;" for table in tables_here), *statements,
                *(f"ALTER TABLE {table} ENABLE TRIGGER USER;" for table in tables_here)]

    DatabaseOperations.sql_flush = sql_flush


_flush_past_the_audit_triggers()
