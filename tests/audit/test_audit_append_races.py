"""Appends racing on one chain, on real PostgreSQL: each links to the row before it.

An append takes its head's lock, moves it and links its row in one statement
(audit/chain.py), so the link is computed from the head as locked: the
latest committed one, even when the statement started before it committed.
"""

import threading

import pytest
from django.db import connection, transaction

from audit import chain as audit_chain
from audit import trail as audit
from audit.models import GENESIS_HASH, GLOBAL_CHAIN, AuditEvent
from tests.helpers.races import all_at_once, backend_pid, wait_until_queued

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

THREADS = 8


def login_row():
    return audit.record(audit.Kind.LOGIN, actor_system=audit.ANONYMOUS, decision="succeeded")


def test_first_appends_racing_on_a_new_chain_make_one_chain():
    # The chain has no head yet: every racer finds none, one creates it, all link in turn.
    rows = all_at_once([login_row] * THREADS)
    assert not any(isinstance(row, Exception) for row in rows), rows
    stored = list(AuditEvent.objects.filter(chain=GLOBAL_CHAIN).order_by("id").values_list("seq", "prev_hash", "hash"))
    assert [seq for seq, _, _ in stored] == list(range(1, THREADS + 1))  # ids grow with seq
    assert [prev for _, prev, _ in stored] == [GENESIS_HASH] + [digest for _, _, digest in stored[:-1]]
    assert sorted((row.seq, row.hash) for row in rows) == [(seq, digest) for seq, _, digest in stored]
    assert audit_chain.verify().intact


@pytest.mark.parametrize("round_", range(3))
def test_appends_racing_on_a_chain_in_use_link_one_after_another(round_):
    login_row()
    all_at_once([login_row] * THREADS)
    seqs = list(AuditEvent.objects.filter(chain=GLOBAL_CHAIN).order_by("id").values_list("seq", flat=True))
    assert seqs == list(range(1, THREADS + 2))
    assert audit_chain.verify().intact


def login_pair():
    # Two rows in one statement, their head moved by two (a suspend's verdict and its park).
    return audit.record_entries(
        [
            audit.entry(audit.Kind.LOGIN, actor_system=audit.ANONYMOUS, decision=decision)
            for decision in ("failed", "succeeded")
        ]
    )


@pytest.mark.parametrize("in_use", [False, True], ids=["new chain", "chain in use"])
def test_pairs_racing_on_a_chain_link_in_order_with_single_rows(in_use):
    if in_use:
        login_row()
    results = all_at_once([login_pair, login_row] * (THREADS // 2))
    assert not any(isinstance(result, Exception) for result in results), results
    stored = list(
        AuditEvent.objects.filter(chain=GLOBAL_CHAIN).order_by("id").values_list("seq", "prev_hash", "hash", "decision")
    )
    assert [seq for seq, *_ in stored] == list(range(1, len(stored) + 1)) and len(stored) == THREADS // 2 * 3 + in_use
    assert [prev for _, prev, *_ in stored] == [GENESIS_HASH] + [digest for _, _, digest, _ in stored[:-1]]
    pairs = [result for result in results if isinstance(result, list)]
    for first, second in pairs:  # each pair's rows are neighbours, in the order given
        assert (second.seq, second.prev_hash, first.decision, second.decision) == (
            first.seq + 1,
            first.hash,
            "failed",
            "succeeded",
        )
    returned = [row for pair in pairs for row in pair] + [row for row in results if not isinstance(row, list)]
    assert {(row.seq, row.prev_hash, row.hash) for row in returned} <= {tuple(row[:3]) for row in stored}
    assert audit_chain.verify().intact


def test_an_append_queued_behind_the_heads_holder_links_to_the_holders_row():
    first = login_row()
    waiting, second = [], {}

    def append_b():
        try:
            waiting.append(backend_pid())
            second["row"] = login_row()
        finally:
            connection.close()

    b = threading.Thread(target=append_b)
    with transaction.atomic():
        held = login_row()  # A holds the head until it commits
        b.start()
        wait_until_queued(lambda: waiting[0] if waiting else None)
        assert b.is_alive(), "B appended while A held the head"
    b.join(timeout=10)
    assert (held.seq, held.prev_hash) == (first.seq + 1, first.hash)
    # B's statement began before A's row committed; its link is A's row all the same.
    assert (second["row"].seq, second["row"].prev_hash) == (held.seq + 1, held.hash)
    assert audit_chain.verify().intact
