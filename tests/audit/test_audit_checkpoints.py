"""The audit tip anchored outside the database (SPEC section 8): `audit_checkpoint` appends the chains'
heads, HMAC-signed with CONDOR_AUDIT_KEY, to a file; `verify_audit --checkpoints FILE` catches a
rewritten or deleted newest row that the chain alone cannot show. The tampering here is a superuser's:
`SET LOCAL session_replication_role = replica` switches every trigger off for the transaction."""

import json
import os
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from audit import chain as audit_chain
from audit import checkpoints as audit_checkpoints
from audit import trail as audit
from audit.models import AuditChainHead, AuditEvent
from runs.models import Run
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="tampering goes around PostgreSQL triggers"
)

KEY = "k" * audit_checkpoints.KEY_MIN_CHARS


@pytest.fixture
def key(settings):
    settings.CONDOR_AUDIT_KEY = KEY
    return KEY


@pytest.fixture
def checkpoints(tmp_path, key):
    return tmp_path / "audit-checkpoints.jsonl"


@pytest.fixture
def session_rows(api) -> list[int]:
    """Three rows of one session's chain, the newest last."""
    run = Run.objects.select_related("session").get(pk=open_executing_run(api, patient_ref="MRN-7"))
    return [
        audit.record(audit.Kind.VERDICT, run=run, actor_system=audit.SWEEP, decision="allow", data={"step": step}).pk
        for step in range(3)
    ]


def newest(row_ids) -> AuditEvent:
    return AuditEvent.objects.get(pk=row_ids[-1])


def as_superuser_without_triggers(*statements):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        for sql, params in statements:
            cursor.execute(sql, params)
        cursor.execute("SET LOCAL session_replication_role = origin")


def rewrite_newest(row: AuditEvent) -> None:
    """The row's content changed, its hash recomputed and its head moved to match: the chain still holds."""
    values = [getattr(row, field) for field in audit_chain.HASHED_FIELDS]
    values[audit_chain.HASHED_FIELDS.index("decision")] = "blocked"
    digest = audit_chain.row_hash(tuple(values))
    as_superuser_without_triggers(
        ("UPDATE approvals_auditevent SET decision = 'blocked', hash = %s WHERE id = %s", [digest, row.pk]),
        ("UPDATE approvals_auditchainhead SET hash = %s WHERE chain = %s", [digest, row.chain]),
    )


def delete_newest(row: AuditEvent) -> None:
    as_superuser_without_triggers(
        ("DELETE FROM approvals_auditevent WHERE id = %s", [row.pk]),
        (
            "UPDATE approvals_auditchainhead SET seq = seq - 1, hash = prev_hash, prev_hash = %s WHERE chain = %s",
            [row.prev_hash, row.chain],
        ),
    )


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def verify_fails(*args) -> str:
    with pytest.raises(CommandError) as failed:
        call_command("verify_audit", *args)
    assert failed.value.returncode == 1
    return str(failed.value)


def test_a_checkpoint_holds_every_chains_head_signed(session_rows, checkpoints):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    [line] = lines(checkpoints)
    row = newest(session_rows)
    assert {"chain": row.chain, "row_id": row.pk, "rows": 3, "hash": row.hash} in line["heads"]
    assert {head["chain"] for head in line["heads"]} == set(AuditChainHead.objects.values_list("chain", flat=True))
    assert line["hmac"] and line["at"] and line["since"] is None


def test_checkpoints_of_an_untouched_log_hold(session_rows, checkpoints, capsys):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    call_command("verify_audit", "--checkpoints", str(checkpoints))
    assert "audit log intact" in capsys.readouterr().out
    assert AuditEvent.objects.order_by("-id").first().data["checkpoints"] == {
        "file": str(checkpoints),
        "lines": 1,
        "findings": 0,
    }


def test_the_file_is_appended_to_never_rewritten(session_rows, checkpoints):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    first = checkpoints.read_text()
    call_command("audit_checkpoint", "--file", str(checkpoints))
    assert checkpoints.read_text().startswith(first)
    assert len(lines(checkpoints)) == 2


def test_a_later_checkpoint_carries_the_chains_that_gained_rows(session_rows, checkpoints, monkeypatch):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    monkeypatch.setattr(audit_checkpoints, "OVERLAP", timedelta(0))
    login = audit.record(audit.Kind.LOGIN, actor_system=audit.ANONYMOUS, decision="succeeded")
    call_command("audit_checkpoint", "--file", str(checkpoints))
    later = lines(checkpoints)[-1]
    assert [head["chain"] for head in later["heads"]] == [login.chain]
    assert later["since"] == lines(checkpoints)[0]["at"]


def test_the_beat_task_writes_a_checkpoint(session_rows, checkpoints, settings):
    from audit.tasks import audit_checkpoint

    settings.CONDOR_AUDIT_CHECKPOINT_FILE = str(checkpoints)
    audit_checkpoint()
    assert len(lines(checkpoints)) == 1


def test_a_rewritten_newest_row_is_caught_only_by_the_checkpoints(session_rows, checkpoints):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    row = newest(session_rows)
    rewrite_newest(row)
    call_command("verify_audit")  # the chain alone holds: the gap the checkpoints close
    message = verify_fails("--checkpoints", str(checkpoints))
    assert f"row id={row.pk} chain={row.chain} seq=3: the row no longer matches its checkpointed hash" in message
    assert AuditEvent.objects.order_by("-id").first().data["checkpoints"]["findings"] == 1


def test_a_deleted_newest_row_is_caught_only_by_the_checkpoints(session_rows, checkpoints):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    row = newest(session_rows)
    delete_newest(row)
    call_command("verify_audit")
    message = verify_fails("--checkpoints", str(checkpoints))
    assert f"row id={row.pk} chain={row.chain} seq=3: the checkpointed row is gone" in message
    assert "the chain's head moved backwards: it is at seq 2, the checkpoint saw seq 3" in message


def test_a_row_rewritten_between_two_checkpoints_is_caught(session_rows, checkpoints):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    row = newest(session_rows)
    rewrite_newest(row)
    call_command("audit_checkpoint", "--file", str(checkpoints))  # the rewritten tip, signed in its turn
    message = verify_fails("--checkpoints", str(checkpoints))
    assert f"row id={row.pk} chain={row.chain} seq=3: checkpoints disagree" in message


def test_an_altered_checkpoint_line_is_reported(session_rows, checkpoints):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    call_command("audit_checkpoint", "--file", str(checkpoints))
    first, second = lines(checkpoints)
    second["heads"][0]["hash"] = "f" * 64
    checkpoints.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\nnot json\n")
    message = verify_fails("--checkpoints", str(checkpoints))
    assert "checkpoint line 2: the signature does not match" in message
    assert "checkpoint line 3: the signature does not match" in message
    assert "checkpoint line 1" not in message


def test_a_checkpoint_signed_with_another_key_is_reported(session_rows, checkpoints, settings):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    settings.CONDOR_AUDIT_KEY = "another" + KEY
    assert "checkpoint line 1: the signature does not match" in verify_fails("--checkpoints", str(checkpoints))


def test_no_checkpoint_is_written_without_the_key(session_rows, tmp_path, settings):
    settings.CONDOR_AUDIT_KEY = ""
    with pytest.raises(CommandError, match="CONDOR_AUDIT_KEY is not set"):
        call_command("audit_checkpoint", "--file", str(tmp_path / "c.jsonl"))
    assert not (tmp_path / "c.jsonl").exists()


def test_a_short_key_is_refused(session_rows, tmp_path, settings):
    settings.CONDOR_AUDIT_KEY = "short"
    with pytest.raises(CommandError, match="CONDOR_AUDIT_KEY is too short"):
        call_command("audit_checkpoint", "--file", str(tmp_path / "c.jsonl"))


def test_checkpoints_are_not_checked_without_the_key(session_rows, checkpoints, settings):
    call_command("audit_checkpoint", "--file", str(checkpoints))
    settings.CONDOR_AUDIT_KEY = ""
    with pytest.raises(CommandError, match="CONDOR_AUDIT_KEY is not set"):
        call_command("verify_audit", "--checkpoints", str(checkpoints))


def test_the_command_needs_a_file(settings, key, db):
    settings.CONDOR_AUDIT_CHECKPOINT_FILE = None
    with pytest.raises(CommandError, match="Name the checkpoint file"):
        call_command("audit_checkpoint")
