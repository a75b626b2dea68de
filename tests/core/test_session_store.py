"""core/session_store.py: Django's database session store with its read kept as one text; what it loads
is what Django's own store loads, and a session it cannot find is Django's to forget."""

from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.session_store import SessionStore

pytestmark = pytest.mark.django_db


def saved_session(**data) -> str:
    store = SessionStore()
    store.update(data)
    store.create()
    return store.session_key


def test_a_session_loads_as_djangos_store_loads_it_in_one_statement():
    key = saved_session(_auth_user_id="7", note="Ward 4 — bed 12")
    with CaptureQueriesContext(connection) as queries:
        loaded = SessionStore(key).load()
    assert loaded == DjangoSessionStore(key).load() == {"_auth_user_id": "7", "note": "Ward 4 — bed 12"}
    assert [query["sql"].split(" FROM ")[0] for query in queries] == ['SELECT "session_data"']  # the kept text


def test_an_expired_session_loads_nothing_and_its_key_is_forgotten():
    key = saved_session(_auth_user_id="7")
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    store = SessionStore(key)
    assert store.load() == {}
    assert store.session_key is None  # as Django's own load leaves it: a new session gets a new key


def test_an_unknown_key_loads_nothing():
    store = SessionStore("x" * 32)
    assert store.load() == {}
    assert store.session_key is None


def test_a_tampered_session_loads_nothing():
    key = saved_session(_auth_user_id="7")
    Session.objects.filter(session_key=key).update(session_data="not-signed")
    assert SessionStore(key).load() == {}


def test_the_setting_serves_this_store():
    from django.conf import settings

    assert settings.SESSION_ENGINE == "core.session_store"
