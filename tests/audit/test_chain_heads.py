"""A chain head locked by the caller's own statement (audit/chain.py `locked_head_join`), as the gate locks
its session's with the run: named as `chain_for` names it, and used only for rows of that chain."""

import uuid

import pytest
from django.db import connection, transaction

from audit import chain as audit_chain
from audit import trail as audit
from audit.models import AuditChainHead, AuditEvent
from runs.models import Run
from tests.helpers.approval_loop import CHART_READ, gate
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db


def test_the_chain_named_in_sql_is_the_one_named_in_python():
    session_id = uuid.uuid4()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {audit_chain.session_chain_sql('CAST(%s AS uuid)')}", [str(session_id)])
        assert cursor.fetchone()[0] == audit_chain.chain_for(session_id)


def test_the_joined_head_is_the_chains_current_one(api):
    run_id = open_executing_run(api)
    assert gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ).status_code == 200
    chain = audit_chain.chain_for(Run.objects.get(pk=run_id).session_id)
    columns, join = audit_chain.locked_head_join(connection, audit_chain.session_chain_sql("CAST(%s AS uuid)"))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM (SELECT 1) AS here {join}", [str(Run.objects.get(pk=run_id).session_id)])
        head = audit_chain.locked_head(cursor.fetchone())
    stored = AuditChainHead.objects.get(chain=chain)
    assert (head.chain, head.link) == (chain, [stored.seq, stored.hash])
    assert stored.seq == AuditEvent.objects.filter(chain=chain).count() > 0


def test_a_chain_without_a_head_joins_none():
    columns, join = audit_chain.locked_head_join(connection, "%s")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM (SELECT 1) AS here {join}", ["session:nobody"])
        assert audit_chain.locked_head(cursor.fetchone()) is None


def test_a_head_of_another_chain_links_nothing(api):
    run_id = open_executing_run(api)
    run = Run.objects.select_related("session").get(pk=run_id)
    elsewhere = audit_chain.LockedHead(audit_chain.GLOBAL_CHAIN, [7, "0" * 64])
    before = AuditEvent.objects.count()
    with pytest.raises(ValueError, match="head of"), transaction.atomic():
        audit.record(audit.Kind.VERDICT, run=run, actor_system=audit.command("probe"), decision="allow", head=elsewhere)
    assert AuditEvent.objects.count() == before


def test_appends_handed_one_head_link_one_after_another(api):
    # The gate hands the head its run's lock read to each of its appends: the head moves on in place.
    run_id = open_executing_run(api)
    run = Run.objects.select_related("session").get(pk=run_id)
    chain = audit_chain.chain_for(run.session_id)
    with transaction.atomic():
        head = audit_chain.LockedHead(chain, audit_chain.lock_head(chain))
        first = audit.record(
            audit.Kind.VERDICT, run=run, actor_system=audit.command("probe"), decision="allow", head=head
        )
        second = audit.record(
            audit.Kind.VERDICT, run=run, actor_system=audit.command("probe"), decision="allow", head=head
        )
    assert (second.seq, second.prev_hash) == (first.seq + 1, first.hash)
    assert head.link == [second.seq, second.hash]
    assert audit_chain.verify([chain]).intact
