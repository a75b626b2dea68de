"""The audit log becomes a set of hash chains, append-only for real on PostgreSQL.

- New columns (patient_ref, op, chain, seq, prev_hash, hash) and the chain heads.
- Rows written before this migration are linked into their chains here, in id order.
- pgtrigger's UPDATE/DELETE trigger is replaced by plain triggers that refuse UPDATE,
  DELETE and TRUNCATE on every statement: pgtrigger's triggers obey the session
  switch `SET LOCAL pgtrigger.ignore = ...`, which any role could set; these have
  no switch (only the table owner can disable them, with ALTER TABLE).
- The chain head table may only advance one link at a time and is never deleted.
"""

import pgtrigger.migrations
from django.db import migrations, models

AUDIT_TRIGGERS = """
CREATE OR REPLACE FUNCTION condor_audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'condor: the audit log is append-only (% on % refused)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE OR REPLACE FUNCTION condor_audit_head_advance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain <> OLD.chain OR NEW.seq <> OLD.seq + 1 THEN
        RAISE EXCEPTION 'condor: an audit chain head only advances by one (% at %, asked %)',
            OLD.chain, OLD.seq, NEW.seq USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER condor_audit_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON approvals_auditevent
    FOR EACH STATEMENT EXECUTE FUNCTION condor_audit_refuse();
CREATE TRIGGER condor_audit_head_keep
    BEFORE DELETE OR TRUNCATE ON approvals_auditchainhead
    FOR EACH STATEMENT EXECUTE FUNCTION condor_audit_refuse();
CREATE TRIGGER condor_audit_head_advance
    BEFORE UPDATE ON approvals_auditchainhead
    FOR EACH ROW EXECUTE FUNCTION condor_audit_head_advance();
"""

DROP_AUDIT_TRIGGERS = """
DROP TRIGGER IF EXISTS condor_audit_append_only ON approvals_auditevent;
DROP TRIGGER IF EXISTS condor_audit_head_keep ON approvals_auditchainhead;
DROP TRIGGER IF EXISTS condor_audit_head_advance ON approvals_auditchainhead;
DROP FUNCTION IF EXISTS condor_audit_refuse();
DROP FUNCTION IF EXISTS condor_audit_head_advance();
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)  # no placeholders: RAISE uses %
    return run


def link_existing_rows(apps, schema_editor):
    """Give rows written before the chain existed their patient_ref, chain, seq and hashes."""
    from audit.chain import HASHED_FIELDS, chain_for, v1_hash
    from audit.models import GENESIS_HASH

    AuditEvent = apps.get_model("approvals", "AuditEvent")
    AuditChainHead = apps.get_model("approvals", "AuditChainHead")
    Session = apps.get_model("sessions_app", "Session")
    patients = dict(Session.objects.values_list("pk", "patient_ref"))
    tips = {}
    for event in AuditEvent.objects.order_by("id").iterator(chunk_size=2000):
        event.patient_ref = patients.get(event.session_id, "")
        event.chain = chain_for(event.session_id)
        last_seq, last_hash = tips.get(event.chain, (0, GENESIS_HASH))
        event.seq, event.prev_hash = last_seq + 1, last_hash
        event.hash = v1_hash(tuple(getattr(event, field) for field in HASHED_FIELDS))
        event.save(update_fields=["patient_ref", "chain", "seq", "prev_hash", "hash"])
        tips[event.chain] = (event.seq, event.hash)
    AuditChainHead.objects.bulk_create(
        [AuditChainHead(chain=chain, seq=seq, hash=last_hash) for chain, (seq, last_hash) in tips.items()]
    )


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0005_mutate_tier_is_low_or_high'),
        ('sessions_app', '0002_sqlite_guards'),
    ]

    operations = [
        pgtrigger.migrations.RemoveTrigger(model_name='auditevent', name='audit_append_only'),
        migrations.CreateModel(
            name='AuditChainHead',
            fields=[
                ('chain', models.CharField(max_length=48, primary_key=True, serialize=False)),
                ('seq', models.BigIntegerField(default=0)),
                ('hash', models.CharField(default='0000000000000000000000000000000000000000000000000000000000000000', max_length=64)),
            ],
        ),
        migrations.AlterField(model_name='auditevent', name='at', field=models.DateTimeField()),
        migrations.AlterField(model_name='auditevent', name='run_id', field=models.UUIDField(blank=True, null=True)),
        migrations.AlterField(model_name='auditevent', name='approval_id', field=models.UUIDField(blank=True, null=True)),
        migrations.AlterField(
            model_name='auditevent', name='kind',
            field=models.CharField(choices=[('verdict', 'Verdict'), ('suspend', 'Suspend'), ('decision', 'Decision'), ('consume', 'Consume'), ('result', 'Result'), ('expiry', 'Expiry'), ('run_close', 'Run Close'), ('taint', 'Taint'), ('registry_change', 'Registry Change'), ('export', 'Admin export'), ('login', 'Login'), ('login_failed', 'Failed login'), ('verify', 'Chain verification')], max_length=24),
        ),
        migrations.AlterField(
            model_name='auditevent', name='data',
            field=models.JSONField(blank=True, default=dict, verbose_name='details'),
        ),
        migrations.AddField(
            model_name='auditevent', name='patient_ref',
            field=models.CharField(blank=True, help_text="The session's patient at the time.", max_length=120),
        ),
        migrations.AddField(model_name='auditevent', name='op', field=models.CharField(blank=True, max_length=60)),
        migrations.AddField(model_name='auditevent', name='chain', field=models.CharField(default='', max_length=48), preserve_default=False),
        migrations.AddField(model_name='auditevent', name='seq', field=models.BigIntegerField(default=0), preserve_default=False),
        migrations.AddField(model_name='auditevent', name='prev_hash', field=models.CharField(default='', max_length=64), preserve_default=False),
        migrations.AddField(model_name='auditevent', name='hash', field=models.CharField(default='', max_length=64), preserve_default=False),
        migrations.RunPython(link_existing_rows, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='auditevent',
            constraint=models.UniqueConstraint(fields=('chain', 'seq'), name='audit_chain_seq_unique'),
        ),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['kind', '-id'], name='audit_kind_recent')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['rule_id', '-id'], name='audit_rule_recent')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['decision', '-id'], name='audit_decision_recent')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['tool', '-id'], name='audit_tool_recent')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['actor', '-id'], name='audit_actor_recent')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['patient_ref', '-id'], name='audit_patient_recent')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['run_id', 'id'], name='audit_run')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['approval_id', 'id'], name='audit_approval')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['session_id', 'id'], name='audit_session')),
        migrations.AddIndex(model_name='auditevent', index=models.Index(fields=['at'], name='audit_at')),
        migrations.RunPython(_on_postgresql(AUDIT_TRIGGERS), _on_postgresql(DROP_AUDIT_TRIGGERS)),
    ]
