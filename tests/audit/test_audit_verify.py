"""verify_audit (SPEC section 8): an intact log passes; an edited, deleted or reordered row is caught
and named, by the command and by the admin action. Tampering here goes around the triggers as only
the table owner can (ALTER TABLE ... DISABLE TRIGGER)."""

import os

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from audit import chain as audit_chain
from audit import trail as audit
from audit.models import AuditEvent
from runs.models import Run
from tests.governance.test_admin import admin_client, post
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="tampering goes around PostgreSQL triggers"
)


@pytest.fixture
def chain(api) -> list[int]:
    """Five rows in one session's chain, with rows of another session and the global chain between."""
    run = Run.objects.select_related("session").get(pk=open_executing_run(api, patient_ref="MRN-7"))
    other = Run.objects.select_related("session").get(pk=open_executing_run(api, patient_ref="MRN-8"))
    ids = []
    for step in range(5):
        ids.append(
            audit.record(
                audit.Kind.VERDICT, run=run, actor_system=audit.SWEEP, decision="allow", data={"step": step}
            ).pk
        )
        audit.record(audit.Kind.VERDICT, run=other, actor_system=audit.SWEEP, decision="allow")
        audit.record(audit.Kind.LOGIN, actor_system=audit.ANONYMOUS, decision="succeeded")
    return ids


def as_owner_without_triggers(*statements):
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending FK events under ALTER TABLE
        cursor.execute("ALTER TABLE approvals_auditevent DISABLE TRIGGER USER")
        for sql, params in statements:
            cursor.execute(sql, params)
        cursor.execute("ALTER TABLE approvals_auditevent ENABLE TRIGGER USER")


def verify_fails() -> str:
    with pytest.raises(CommandError) as failed:
        call_command("verify_audit")
    assert failed.value.returncode == 1
    return str(failed.value)


def test_an_intact_log_passes(chain, capsys):
    call_command("verify_audit")
    assert "audit log intact" in capsys.readouterr().out
    last = AuditEvent.objects.order_by("-id").first()
    assert (last.kind, last.actor, last.decision) == ("verify", "command:verify_audit", "intact")


def v1_rows(count: int) -> list[int]:
    """`count` rows appended to the global chain as they were hashed before version 2 (one digest
    over content and link), the head moved with each, as the application's role may move it."""
    from audit.models import AuditChainHead

    audit.record(audit.Kind.LOGIN, actor_system=audit.ANONYMOUS, decision="succeeded")  # the head exists
    ids = []
    for _ in range(count):
        head = AuditChainHead.objects.get(chain=audit_chain.GLOBAL_CHAIN)
        row = audit.entry(audit.Kind.LOGIN, actor_system=audit.ANONYMOUS, decision="succeeded")
        row.seq, row.prev_hash = head.seq + 1, head.hash
        row.hash = audit_chain.v1_hash(tuple(getattr(row, field) for field in audit_chain.HASHED_FIELDS))
        row.save(force_insert=True)
        AuditChainHead.objects.filter(chain=head.chain).update(seq=row.seq, prev_hash=head.hash, hash=row.hash)
        ids.append(row.pk)
    return ids


def test_rows_hashed_before_version_2_verify_and_new_rows_link_to_them(db):
    older = v1_rows(2)
    newer = audit.record(audit.Kind.LOGIN, actor_system=audit.ANONYMOUS, decision="succeeded")
    assert newer.prev_hash == AuditEvent.objects.get(pk=older[-1]).hash
    assert (
        newer.hash
        == audit_chain.event_hash(newer)
        != audit_chain.v1_hash(tuple(getattr(newer, field) for field in audit_chain.HASHED_FIELDS))
    )
    call_command("verify_audit")  # raises CommandError on a broken chain


def test_an_edited_row_hashed_before_version_2_is_named(db):
    older = v1_rows(2)
    as_owner_without_triggers(("UPDATE approvals_auditevent SET decision = 'failed' WHERE id = %s", [older[0]]))
    assert f"row id={older[0]} chain=global" in verify_fails()
    assert "content hash mismatch" in verify_fails()


def test_an_edited_row_is_named(chain):
    as_owner_without_triggers(("UPDATE approvals_auditevent SET decision = 'blocked' WHERE id = %s", [chain[2]]))
    message = verify_fails()
    assert f"row id={chain[2]} chain=session:" in message
    assert "seq=3: content hash mismatch" in message
    assert AuditEvent.objects.order_by("-id").first().data["first_broken"]["id"] == chain[2]


def test_a_row_holding_a_number_no_canonical_json_writes_is_named_not_a_crash(chain):
    # jsonb gives 1e16 back as the integer 10000000000000000, which RFC 8785 refuses to write.
    as_owner_without_triggers(("UPDATE approvals_auditevent SET data = '{\"n\": 1e16}' WHERE id = %s", [chain[1]]))
    message = verify_fails()
    assert f"row id={chain[1]} chain=session:" in message
    assert "content cannot be verified" in message


def test_an_edit_that_recomputes_the_rows_hash_breaks_the_next_link(chain):
    row = AuditEvent.objects.get(pk=chain[1])
    row.decision = "blocked"
    forged = audit_chain.event_hash(row)
    as_owner_without_triggers(
        ("UPDATE approvals_auditevent SET decision = 'blocked', hash = %s WHERE id = %s", [forged, chain[1]])
    )
    assert f"row id={chain[2]} " in verify_fails()
    assert "previous hash mismatch" in verify_fails()


def test_a_deleted_row_is_named_by_the_gap_it_leaves(chain):
    as_owner_without_triggers(("DELETE FROM approvals_auditevent WHERE id = %s", [chain[1]]))
    message = verify_fails()
    assert f"row id={chain[2]} " in message
    assert "missing predecessor: seq 2 absent" in message


def test_two_swapped_rows_are_named(chain):
    first, second = chain[1], chain[3]
    as_owner_without_triggers(
        ("UPDATE approvals_auditevent SET id = -id WHERE id = %s", [first]),
        ("UPDATE approvals_auditevent SET id = %s WHERE id = %s", [first, second]),
        ("UPDATE approvals_auditevent SET id = %s WHERE id = %s", [second, -first]),
    )
    message = verify_fails()
    assert f"row id={first} " in message
    assert f"wrong order: seq 4 is stored before seq 2 (row id={second})" in message


def test_a_deleted_newest_row_is_caught_by_its_chain_head(chain):
    as_owner_without_triggers(("DELETE FROM approvals_auditevent WHERE id = %s", [chain[-1]]))
    message = verify_fails()
    assert "chain head chain=session:" in message
    assert "the head is at seq 5 but the last row is seq 4" in message


def test_the_admin_action_verifies_the_chains_of_the_selection(chain, carl):
    http = admin_client(carl)
    response = post(http, "/admin/audit/auditevent/", {"action": "verify_chains", "_selected_action": [chain[0]]})
    assert response.status_code == 302
    page = http.get(response["Location"]).content.decode()
    assert "Intact: 5 rows in 1 chain(s) verified." in page
    as_owner_without_triggers(("UPDATE approvals_auditevent SET tool = 'x' WHERE id = %s", [chain[4]]))
    response = post(http, "/admin/audit/auditevent/", {"action": "verify_chains", "_selected_action": [chain[0]]})
    page = http.get(response["Location"]).content.decode()
    assert f"BROKEN: row id={chain[4]} " in page
    last = AuditEvent.objects.order_by("-id").first()
    assert (last.kind, last.actor, last.decision) == ("verify", "user:carl", "broken")


def test_single_and_batched_appends_in_one_transaction_keep_one_chain(api):
    # A decision that stops its run appends a row, then the close appends a batch, then more
    # rows may follow, all in one transaction: each must link to the head as the last one left it.
    run = Run.objects.select_related("session").get(pk=open_executing_run(api, patient_ref="MRN-9"))
    audit.record(audit.Kind.VERDICT, run=run, actor_system=audit.SWEEP, decision="allow")
    audit.record_all(
        [audit.entry(audit.Kind.VERDICT, run=run, actor_system=audit.SWEEP, decision="allow") for _ in range(2)]
    )
    last = audit.record(audit.Kind.VERDICT, run=run, actor_system=audit.SWEEP, decision="allow")

    assert [row.seq for row in AuditEvent.objects.filter(chain=last.chain).order_by("id")][-4:] == [
        last.seq - 3,
        last.seq - 2,
        last.seq - 1,
        last.seq,
    ]
    call_command("verify_audit")  # raises CommandError on a broken chain
