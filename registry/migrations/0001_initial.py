"""Tool descriptors and the four-eyes proposals (tool changes, access grants) move here from approvals.

State only: the table keeps its name (Meta.db_table), so no row, index, constraint or
trigger is touched; Django is told the model's new home and nothing else.
"""

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('approvals', '0023_quick_reasons'),
        ('auth', '0012_alter_user_first_name_max_length'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='ToolDescriptor',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('name', models.CharField(max_length=120, unique=True)),
                    ('description', models.TextField(blank=True)),
                    ('policy_class', models.CharField(blank=True, choices=[('read', 'Read'), ('mutate', 'Mutate'), ('exec', 'Exec'), ('comms', 'Comms')], max_length=16, null=True)),
                    ('hitl_tier', models.CharField(blank=True, choices=[('low', 'Low'), ('high', 'High')], max_length=8, null=True)),
                    ('trust', models.CharField(choices=[('trusted', 'Trusted'), ('untrusted', 'Untrusted')], default='trusted', max_length=16)),
                    ('allowed_hosts', models.JSONField(blank=True, default=list)),
                    ('metadata', models.JSONField(blank=True, default=dict)),
                    ('approvals_required', models.PositiveSmallIntegerField(default=1, help_text='Distinct reviewers who must approve a call of this tool (1 to 3).', validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(3)])),
                    ('identity_args', models.JSONField(blank=True, default=list, help_text='Top-level argument names that identify the patient (at most 20): a reviewer may not change them when editing a call. patient_ref, patient_id and mrn are always locked.')),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('updated_at', models.DateTimeField(auto_now=True)),
                ],
                options={
                    'db_table': 'approvals_tooldescriptor',
                    'ordering': ['name'],
                    'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('policy_class', 'mutate'), _negated=True), models.Q(('hitl_tier__in', ['low', 'high']), ('hitl_tier__isnull', False)), _connector='OR'), name='mutate_tool_declares_tier', violation_error_message='A mutate tool must declare its HITL tier (low or high).'), models.CheckConstraint(condition=models.Q(('approvals_required__gte', 1), ('approvals_required__lte', 3)), name='tool_quorum_1_to_3', violation_error_message='A tool needs 1 to 3 approvals.')],
                },
            ),
            migrations.CreateModel(
                name='AccessGrant',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('status', models.CharField(choices=[('pending', 'Pending'), ('confirmed', 'Confirmed'), ('rejected', 'Rejected')], default='pending', max_length=16)),
                    ('proposed_at', models.DateTimeField(auto_now_add=True)),
                    ('decided_at', models.DateTimeField(blank=True, null=True)),
                    ('decision_reason', models.TextField(blank=True)),
                    ('superuser', models.BooleanField(default=False)),
                    ('activate', models.BooleanField(default=False)),
                    ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ('group', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='access_grants', to='auth.group')),
                    ('groups', models.ManyToManyField(blank=True, related_name='+', to='auth.group')),
                    ('permissions', models.ManyToManyField(blank=True, related_name='+', to='auth.permission')),
                    ('proposed_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='access_grants', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'approvals_accessgrant',
                    'ordering': ['-proposed_at'],
                    'abstract': False,
                    'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('group__isnull', True), ('user__isnull', False)), models.Q(('group__isnull', False), ('user__isnull', True)), _connector='OR'), name='access_grant_one_grantee'), models.UniqueConstraint(condition=models.Q(('status', 'pending')), fields=('user',), name='one_pending_grant_per_user'), models.UniqueConstraint(condition=models.Q(('status', 'pending')), fields=('group',), name='one_pending_grant_per_group'), models.CheckConstraint(condition=models.Q(models.Q(('decided_at__isnull', True), ('decided_by__isnull', True), ('status', 'pending')), models.Q(models.Q(('status', 'pending'), _negated=True), ('decided_at__isnull', False), ('decided_by__isnull', False)), _connector='OR'), name='access_grant_decided_iff_not_pending'), models.CheckConstraint(condition=models.Q(models.Q(('status', 'confirmed'), _negated=True), models.Q(models.Q(('decided_by', models.F('proposed_by')), _negated=True), models.Q(('user__isnull', True), models.Q(('decided_by', models.F('user')), _negated=True), _connector='OR')), _connector='OR'), name='access_grant_confirmed_by_another_admin')],
                },
            ),
            migrations.CreateModel(
                name='ToolChange',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('status', models.CharField(choices=[('pending', 'Pending'), ('confirmed', 'Confirmed'), ('rejected', 'Rejected')], default='pending', max_length=16)),
                    ('proposed_at', models.DateTimeField(auto_now_add=True)),
                    ('decided_at', models.DateTimeField(blank=True, null=True)),
                    ('decision_reason', models.TextField(blank=True)),
                    ('tool', models.CharField(max_length=120)),
                    ('before', models.JSONField(blank=True, null=True)),
                    ('after', models.JSONField()),
                    ('reasons', models.JSONField(default=list)),
                    ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ('proposed_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'approvals_toolchange',
                    'ordering': ['-proposed_at'],
                    'abstract': False,
                    'constraints': [models.UniqueConstraint(condition=models.Q(('status', 'pending')), fields=('tool',), name='one_pending_change_per_tool'), models.CheckConstraint(condition=models.Q(models.Q(('decided_at__isnull', True), ('decided_by__isnull', True), ('status', 'pending')), models.Q(models.Q(('status', 'pending'), _negated=True), ('decided_at__isnull', False), ('decided_by__isnull', False)), _connector='OR'), name='tool_change_decided_iff_not_pending'), models.CheckConstraint(condition=models.Q(models.Q(('status', 'confirmed'), _negated=True), models.Q(('decided_by', models.F('proposed_by')), _negated=True), _connector='OR'), name='tool_change_confirmed_by_another_admin')],
                },
            ),
        ]),
    ]
