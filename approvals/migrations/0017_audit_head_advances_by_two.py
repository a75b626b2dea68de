"""A chain head may advance by two links in one statement: a suspend's verdict and its park.

One statement cannot update a row twice, so two audit rows in one statement move their head
once, by two. A head still never moves back, stands still or skips: `verify_audit` finds a head
ahead of its last row as before.
"""

from django.db import migrations

ADVANCE = """
CREATE OR REPLACE FUNCTION condor_audit_head_advance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain <> OLD.chain OR NEW.seq - OLD.seq NOT IN (1, 2) THEN
        RAISE EXCEPTION 'condor: an audit chain head only advances by one or two (% at %, asked %)',
            OLD.chain, OLD.seq, NEW.seq USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
"""

BY_ONE = """
CREATE OR REPLACE FUNCTION condor_audit_head_advance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain <> OLD.chain OR NEW.seq <> OLD.seq + 1 THEN
        RAISE EXCEPTION 'condor: an audit chain head only advances by one (% at %, asked %)',
            OLD.chain, OLD.seq, NEW.seq USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)  # no placeholders: RAISE uses %
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0016_audit_head_prev_hash'),
    ]

    operations = [
        migrations.RunPython(_on_postgresql(ADVANCE), _on_postgresql(BY_ONE)),
    ]
