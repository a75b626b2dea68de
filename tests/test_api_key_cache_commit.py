"""A key revoked through the ORM stops at once (agents/api_key_cache.py), even for a request
that looked the key up while the revocation was saved but not yet committed.

The revocation strikes the cached answer when it commits; another thread reading the key
before that commit still finds it valid, and must not keep that answer.
"""

import threading

import pytest
from django.db import connection, transaction

from agents.api_key_cache import cached_client
from agents.auth import lookup_key
from agents.models import ApiClientKey
from tests.helpers.personas import api_for

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture(autouse=True)
def long_window(settings):
    settings.CONDOR_API_KEY_CACHE_SECONDS = 60  # no window ends during the test: only a strike can end one


def status_in_another_thread(agent) -> int:
    """A request on another thread (its own connection): it sees only committed rows."""
    answer = []

    def request():
        try:
            answer.append(api_for(agent).get("/api/v1/sessions/").status_code)
        finally:
            connection.close()

    thread = threading.Thread(target=request)
    thread.start()
    thread.join(timeout=60)
    assert answer, "the request never returned"
    return answer[0]


def revoke(agent) -> None:
    key = ApiClientKey.objects.get(client=agent)
    key.revoked = True
    key.save()


def test_a_key_looked_up_while_its_revocation_commits_is_not_kept(ward_agent):
    with transaction.atomic():
        revoke(ward_agent)
        assert status_in_another_thread(ward_agent) == 200  # not committed yet: still valid there

    assert api_for(ward_agent).get("/api/v1/sessions/").status_code == 401


def test_an_answer_read_before_a_revocation_committed_is_not_stored_after_it(ward_agent):
    def lookup_overtaken_by_the_revocation(raw_key):
        answer = lookup_key(raw_key)  # the key as it was: valid
        revoke(ward_agent)  # commits (autocommit) before the answer is stored
        return answer

    assert cached_client(ward_agent.raw_key, lookup_overtaken_by_the_revocation) == ward_agent
    assert api_for(ward_agent).get("/api/v1/sessions/").status_code == 401


def test_a_rolled_back_revocation_leaves_the_key_working(ward_agent):
    with transaction.atomic():
        revoke(ward_agent)
        transaction.set_rollback(True)

    assert api_for(ward_agent).get("/api/v1/sessions/").status_code == 200
