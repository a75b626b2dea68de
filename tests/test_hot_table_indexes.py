"""The indexes of the tables every hot path writes (issue 11): each INSERT pays for each index.

A foreign key's own index is redundant where a composite index or unique constraint leads
with the same column; those were dropped (runs 0003, approvals 0014, sessions_app 0005).
These tests pin the index set, so dropping a covering index, or adding back a redundant one
(Django adds one for every ForeignKey unless `db_index=False`), fails here and is looked at.
"""

import pytest
from django.db import connection

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="reads PostgreSQL's catalog")

# table -> {index: its key columns (an expression shown as PostgreSQL prints it, collapsed to "expr")}
HOT_TABLE_INDEXES = {
    "runs_runevent": {
        "runs_runevent_pkey": ("id",),
        "runevent_run_seq": ("run_id", "id"),  # also every lookup by run: the FK has no index of its own
        "runevent_unpublished": ("id",),  # partial: published_at IS NULL
    },
    "approvals_approval": {
        "approvals_approval_pkey": ("id",),
        "one_approval_per_suspend": ("run_id", "step_id", "contract_hash"),  # also every lookup by run
        "approvals_approval_session_id_951c8654": ("session_id",),  # approval_grant_lookup is partial
        "approvals_approval_decided_by_id_16c3e602": ("decided_by_id",),  # PROTECT: deleting a user looks
        "approvals_approval_claimed_by_id_ed0535b5": ("claimed_by_id",),  # here, and no composite leads with it
        "approval_status_expiry": ("status", "expires_at"),
        "approval_inbox_queue": ("expr", "expr", "expires_at", "id"),
        "approval_decided_at": ("decided_at",),
        "approval_grant_lookup": ("session_id", "tool", "payload_hash"),
        "approval_client_pending": ("client_id", "expires_at"),  # the pending limit's count; partial
    },
    "approvals_toolcall": {
        "approvals_toolcall_pkey": ("id",),
        "one_tool_call_per_id": ("run_id", "tool_call_id"),  # also every lookup by run
    },
    "sessions_app_message": {
        "sessions_app_message_pkey": ("seq",),
        "message_session_seq": ("session_id", "seq"),  # also every lookup by session
        "one_message_per_id": ("session_id", "message_id"),
        "sessions_app_message_run_id_5bab1ed9": ("run_id",),  # SET_NULL on a run's delete finds them by it
    },
    "approvals_auditevent": {
        "approvals_auditevent_pkey": ("id",),
        "audit_chain_seq_unique": ("chain", "seq"),
        # The actor foreign keys keep their indexes: no composite leads with them, and deleting a
        # user or API client (PROTECT) must find its audit rows without reading the whole log.
        "approvals_auditevent_actor_user_id_a68c010a": ("actor_user_id",),
        "approvals_auditevent_actor_client_id_4431a36a": ("actor_client_id",),
        "audit_kind_recent": ("kind", "id"),
        "audit_rule_recent": ("rule_id", "id"),
        "audit_decision_recent": ("decision", "id"),
        "audit_tool_recent": ("tool", "id"),
        "audit_actor_recent": ("actor", "id"),
        "audit_patient_recent": ("patient_ref", "id"),
        "audit_run": ("run_id", "id"),
        "audit_approval": ("approval_id", "id"),
        "audit_session": ("session_id", "id"),
        "audit_at": ("at",),
    },
}


def indexes(table: str) -> dict:
    """{index name: (key columns, unique, partial)} as PostgreSQL has them."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT index_class.relname, ix.indisunique, ix.indpred IS NOT NULL,
                   array(SELECT pg_get_indexdef(ix.indexrelid, k, true)
                         FROM generate_series(1, ix.indnkeyatts) AS k ORDER BY k)
            FROM pg_index ix JOIN pg_class index_class ON index_class.oid = ix.indexrelid
            WHERE ix.indrelid = %s::regclass
        """,
            [table],
        )
        return {
            name: (tuple(column if column.isidentifier() else "expr" for column in columns), unique, partial)
            for name, unique, partial, columns in cursor.fetchall()
        }


@pytest.mark.parametrize("table", HOT_TABLE_INDEXES)
def test_a_hot_table_carries_exactly_its_pinned_indexes(db, table):
    found = {name: columns for name, (columns, _, _) in indexes(table).items()}
    assert found == HOT_TABLE_INDEXES[table]


@pytest.mark.parametrize("table", HOT_TABLE_INDEXES)
def test_no_plain_index_of_a_hot_table_is_the_leading_part_of_another(db, table):
    # A plain (not unique, not partial) index on columns another full index starts with serves
    # no lookup the other cannot, and costs every INSERT.
    found = indexes(table)
    full = {name: columns for name, (columns, _, partial) in found.items() if not partial}
    redundant = [
        (name, other)
        for name, (columns, unique, partial) in found.items()
        if not unique and not partial and "expr" not in columns
        for other, longer in full.items()
        if other != name and len(longer) > len(columns) and longer[: len(columns)] == columns
    ]
    assert redundant == []
