"""Whether a caller is a reviewer is asked once per request (agents/auth.py is_reviewer).

The decision's permission and its visibility check both need the answer; it comes
with the user object Django loads for each request (approvals/auth_backends.py), in the
same query, so leaving the reviewers group takes effect on the very next request.
"""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.helpers.approval_loop import approve, decide, park
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db


def test_a_decision_reads_the_reviewers_group_once_with_the_user(api, catalog, reviewer_http):
    approval = park(api, open_executing_run(api))
    with CaptureQueriesContext(connection) as queries:
        approve(reviewer_http, approval["id"])
    asking = [query["sql"] for query in queries.captured_queries if "'reviewers'" in query["sql"]]
    assert len(asking) == 1, asking
    assert asking[0].startswith('SELECT "auth_user"."id"'), asking


def test_leaving_the_reviewers_group_applies_to_the_next_request(api, catalog, rita, reviewer_http):
    run_id = open_executing_run(api)
    first, second = park(api, run_id), park(api, run_id)
    approve(reviewer_http, first["id"])

    rita.groups.remove(Group.objects.get(name="reviewers"))

    response = decide(reviewer_http, second["id"], {"approved": True})
    assert response.status_code == 403, response.content
