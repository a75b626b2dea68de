"""The audit log and its chain heads move here from approvals.

State only: the table keeps its name (Meta.db_table), so no row, index, constraint or
trigger is touched; Django is told the model's new home and nothing else.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('approvals', '0023_quick_reasons'),
        ('agents', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='AuditChainHead',
                fields=[
                    ('chain', models.CharField(max_length=48, primary_key=True, serialize=False)),
                    ('seq', models.BigIntegerField(default=0)),
                    ('hash', models.CharField(default='0000000000000000000000000000000000000000000000000000000000000000', max_length=64)),
                    ('prev_hash', models.CharField(db_default='0000000000000000000000000000000000000000000000000000000000000000', default='0000000000000000000000000000000000000000000000000000000000000000', max_length=64)),
                ],
                options={
                    'db_table': 'approvals_auditchainhead',
                },
            ),
            migrations.CreateModel(
                name='AuditEvent',
                fields=[
                    ('id', models.BigAutoField(primary_key=True, serialize=False)),
                    ('at', models.DateTimeField()),
                    ('kind', models.CharField(choices=[('verdict', 'Verdict'), ('suspend', 'Suspend'), ('decision', 'Decision'), ('consume', 'Consume'), ('result', 'Result'), ('expiry', 'Expiry'), ('withdrawal', 'Withdrawal'), ('run_close', 'Run Close'), ('taint', 'Taint'), ('registry_change', 'Registry Change'), ('export', 'Admin export'), ('login', 'Login'), ('login_failed', 'Failed login'), ('verify', 'Chain verification'), ('session_change', 'Session change'), ('claim', 'Claim on an approval'), ('review_team', 'Review team change'), ('escalation', 'Escalation'), ('api_client', 'API client or key change'), ('args_viewed', 'Full arguments viewed'), ('account', 'Account, group or permission change'), ('access_grant', 'Governance or superuser grant'), ('quick_reason', 'Quick rejection reason change')], max_length=24)),
                    ('actor', models.CharField(help_text='Display name of the actor at the time.', max_length=160)),
                    ('session_id', models.UUIDField(blank=True, null=True)),
                    ('run_id', models.UUIDField(blank=True, null=True)),
                    ('approval_id', models.UUIDField(blank=True, null=True)),
                    ('patient_ref', models.CharField(blank=True, help_text="The session's patient at the time.", max_length=120)),
                    ('tool', models.CharField(blank=True, max_length=120)),
                    ('op', models.CharField(blank=True, max_length=60)),
                    ('decision', models.CharField(blank=True, max_length=32)),
                    ('rule_id', models.CharField(blank=True, max_length=80)),
                    ('data', models.JSONField(blank=True, default=dict, verbose_name='details')),
                    ('chain', models.CharField(max_length=48)),
                    ('seq', models.BigIntegerField()),
                    ('prev_hash', models.CharField(max_length=64)),
                    ('hash', models.CharField(max_length=64)),
                    ('actor_client', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='agents.apiclient')),
                    ('actor_user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'approvals_auditevent',
                    'ordering': ['-id'],
                    'indexes': [models.Index(fields=['kind', '-id'], name='audit_kind_recent'), models.Index(fields=['rule_id', '-id'], name='audit_rule_recent'), models.Index(fields=['decision', '-id'], name='audit_decision_recent'), models.Index(fields=['tool', '-id'], name='audit_tool_recent'), models.Index(fields=['actor', '-id'], name='audit_actor_recent'), models.Index(fields=['patient_ref', '-id'], name='audit_patient_recent'), models.Index(fields=['run_id', 'id'], name='audit_run'), models.Index(fields=['approval_id', 'id'], name='audit_approval'), models.Index(fields=['session_id', 'id'], name='audit_session'), models.Index(fields=['at'], name='audit_at')],
                    'constraints': [models.UniqueConstraint(fields=('chain', 'seq'), name='audit_chain_seq_unique')],
                },
            ),
        ]),
    ]
