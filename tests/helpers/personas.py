"""The suite's people and API clients (the fixtures in tests/conftest.py are made of these)."""

import functools
import importlib
from types import SimpleNamespace

from django.apps import apps
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.test import Client
from rest_framework.test import APIClient

from agents.models import ApiClient, ApiClientKey

PASSWORD = "correct horse battery"

# The data migrations that make the reviewer, compliance and governance groups and their permissions.
_GROUP_MIGRATIONS = (
    ("0003_groups", "create_groups"),
    ("0004_group_permissions", "grant"),
    ("0008_governance_permissions", "grant"),
    ("0010_review_teams_claims_quorum", "grant_team_permissions"),
    ("0020_access_grant_permissions", "grant"),
)


def agent(name: str, *, can_park: bool = True) -> ApiClient:
    """An API client with a fresh key; the raw key is on `.raw_key`."""
    client = ApiClient.objects.create(name=name, can_park=can_park)
    _, key = ApiClientKey.objects.create_key(name=f"{name} key", client=client)
    client.raw_key = key
    return client


def api_for(client: ApiClient) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {client.raw_key}")
    return api


@functools.cache
def _password_hash() -> str:
    # Hashed once per run: the real (slow on purpose) hasher, so a live server in
    # another process can still verify a login, without paying for it per persona.
    return make_password(PASSWORD)


def group(name: str) -> Group:
    """A group as the migrations made it, made again the same way if a flush emptied the table
    (a transactional test without serialized rollback, then `--reuse-db`)."""
    if not Group.objects.filter(name=name).exists():
        # Replayed as they ran: each at its own migration's state, when the models they name
        # were still approvals' (their content types moved to their apps after, as here).
        editor = SimpleNamespace(connection=connection)
        states = MigrationLoader(connection)
        moved = importlib.import_module("approvals.migrations.0024_models_move_to_their_apps")
        moved.backwards(apps, editor)
        for migration, function in _GROUP_MIGRATIONS:
            then = states.project_state(("approvals", migration)).apps
            getattr(importlib.import_module(f"approvals.migrations.{migration}"), function)(then, editor)
        moved.forwards(apps, editor)
    return Group.objects.get(name=name)


def person(username: str, group_name: str) -> User:
    """A user in one group; as `create_reviewer` makes them, compliance and governance work in the admin."""
    user = User.objects.create(
        username=username, password=_password_hash(), is_staff=group_name in ("compliance", "governance")
    )
    user.groups.add(group(group_name))
    return user


def logged_in(user) -> Client:
    """A browser-like client: Django session login, CSRF checks enforced as in production."""
    http = Client(enforce_csrf_checks=True)
    http.force_login(user)
    http.get("/inbox/")  # sets the csrftoken cookie like the inbox page does
    return http
