"""A key revoked in this process stops at once (condor/api_key_cache.py), even for a request
that looked the key up while the revocation was saved but not yet committed.

The save's signal empties the cache inside the revoking transaction; another thread
reading the key before that commit still finds it valid, and must not keep that answer.
"""

import threading

import pytest
from django.db import connection, transaction

from approvals.models import ApiClientKey
from condor import api_key_cache
from tests.helpers.personas import api_for

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture(autouse=True)
def empty_cache(settings):
    settings.CONDOR_API_KEY_CACHE_SECONDS = 60  # no window ends during the test: only a clear can end one
    api_key_cache.clear()
    yield
    api_key_cache.clear()


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


def test_a_key_looked_up_while_its_revocation_commits_is_not_kept(ward_agent):
    with transaction.atomic():
        key = ApiClientKey.objects.get(client=ward_agent)
        key.revoked = True
        key.save()  # the cache is emptied here, before the commit
        assert status_in_another_thread(ward_agent) == 200  # not committed yet: still valid there

    assert api_for(ward_agent).get("/api/v1/sessions/").status_code == 401


def test_a_rolled_back_revocation_leaves_the_key_working(ward_agent):
    with transaction.atomic():
        key = ApiClientKey.objects.get(client=ward_agent)
        key.revoked = True
        key.save()
        transaction.set_rollback(True)

    assert api_for(ward_agent).get("/api/v1/sessions/").status_code == 200
