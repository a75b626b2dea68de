"""An approval carries its session's client, so the pending limit counts one index range (issue 11).

The limit used to count a client's open cards through its sessions: one probe of the
approvals per session the client ever had, so a suspend slowed with the client's history
(the count alone took 19 ms at 10,000 sessions; bench/README.md, "Session 8").
"""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.models import Approval
from runs.models import Run
from tests.helpers.approval_loop import suspend
from tests.helpers.runs import open_executing_run

BEFORE = [("approvals", "0014_run_indexes_covered_by_unique_constraints")]


def test_a_parked_approval_carries_its_sessions_client(api, other_api, ward_agent, other_agent):
    mine = suspend(api, open_executing_run(api))
    theirs = suspend(other_api, open_executing_run(other_api))

    assert Approval.objects.get(pk=mine["id"]).client == ward_agent
    assert Approval.objects.get(pk=theirs["id"]).client == other_agent


def test_the_pending_count_reads_no_session(api):
    run_id = open_executing_run(api)
    with CaptureQueriesContext(connection) as queries:
        suspend(api, run_id)

    (park,) = [query["sql"] for query in queries if 'INSERT INTO "approvals_approval"' in query["sql"]]
    assert "COUNT(*)" in park
    assert "sessions_app_session" not in park


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_migration_gives_each_approval_its_sessions_client(api, other_api, ward_agent, other_agent):
    suspend(api, open_executing_run(api))
    suspend(other_api, open_executing_run(other_api))
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    # A row as it was before: no client column at all.
    run = old.get_model("runs", "Run").objects.get(pk=Run.objects.filter(session__client=ward_agent).get().pk)
    old.get_model("approvals", "Approval").objects.create(
        run_id=run.pk,
        session_id=run.session_id,
        tool="prescribe_medication",
        op="create",
        tool_call_id="old",
        step_id="old",
        contract_hash="0" * 64,
        reason_code="approval",
        rule_id="old",
        args={},
        payload_hash="0" * 64,
        requested_at=timezone.now(),
        expires_at=timezone.now(),
    )

    # Through 0015 to the latest migrations, so the suite's later tests find the schema they expect.
    after = MigrationExecutor(connection)
    after.migrate(after.loader.graph.leaf_nodes())

    clients = {
        (approval.session.client_id, approval.client_id) for approval in Approval.objects.select_related("session")
    }
    assert clients == {(ward_agent.pk, ward_agent.pk), (other_agent.pk, other_agent.pk)}
    assert Approval.objects.filter(client=ward_agent).count() == 2
