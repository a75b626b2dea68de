"""A chain head moves only onto the rows just appended to its chain, never to a hash of the mover's choosing.

Until now the database checked only how far a head moved (one or two links), so the
application's role could point a head at any hash: a tamper alarm only the owner could
clear. Now a trigger checks, after each insert or update of a head, the rows the move
covers against the head: they are there, each links to the one before (the first to the
hash the head had), and the head holds the last one's hash and keeps the hash it replaced.
An AFTER trigger, so that it sees the rows whatever the order of the writes: an append
that moves the head and inserts its rows in one statement fires it once both are done.
"""

from django.db import migrations

GENESIS_HASH = "0" * 64  # the "previous hash" of every chain's first row

FOLLOWS_ROWS = """
CREATE OR REPLACE FUNCTION condor_audit_head_follows_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    at_seq bigint := 0;
    last_hash text := '{genesis}';
    linked record;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        at_seq := OLD.seq;
        last_hash := OLD.hash;
    END IF;
    IF NEW.prev_hash <> last_hash THEN
        RAISE EXCEPTION 'condor: an audit chain head keeps the hash it replaced (% at %)', NEW.chain, NEW.seq
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR linked IN SELECT seq, prev_hash, hash FROM {events}
                  WHERE chain = NEW.chain AND seq > at_seq AND seq <= NEW.seq ORDER BY seq LOOP
        EXIT WHEN linked.seq <> at_seq + 1 OR linked.prev_hash <> last_hash;
        at_seq := linked.seq;
        last_hash := linked.hash;
    END LOOP;
    IF at_seq <> NEW.seq OR last_hash <> NEW.hash THEN
        RAISE EXCEPTION 'condor: an audit chain head moves only onto the rows appended to it (% to seq %)',
            NEW.chain, NEW.seq USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER condor_audit_head_follows_rows
    AFTER INSERT OR UPDATE ON {heads}
    FOR EACH ROW EXECUTE FUNCTION condor_audit_head_follows_rows();
"""

DROP = """
DROP TRIGGER IF EXISTS condor_audit_head_follows_rows ON {heads};
DROP FUNCTION IF EXISTS condor_audit_head_follows_rows();
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        quote = schema_editor.quote_name
        tables = {"events": quote(apps.get_model("approvals", "AuditEvent")._meta.db_table),
                  "heads": quote(apps.get_model("approvals", "AuditChainHead")._meta.db_table)}
        schema_editor.execute(sql.format(genesis=GENESIS_HASH, **tables), params=None)  # RAISE uses %
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0017_audit_head_advances_by_two'),
    ]

    operations = [
        migrations.RunPython(_on_postgresql(FOLLOWS_ROWS), _on_postgresql(DROP)),
    ]
