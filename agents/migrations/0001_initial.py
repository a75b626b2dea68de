"""API clients, their keys and idempotency records move here from approvals.

State only: the table keeps its name (Meta.db_table), so no row, index, constraint or
trigger is touched; Django is told the model's new home and nothing else.
"""

import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('approvals', '0023_quick_reasons'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='ApiClient',
                fields=[
                    ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                    ('name', models.CharField(max_length=120, unique=True)),
                    ('can_park', models.BooleanField(default=True)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                ],
                options={
                    'db_table': 'approvals_apiclient',
                    'ordering': ['name'],
                },
            ),
            migrations.CreateModel(
                name='ApiClientKey',
                fields=[
                    ('id', models.CharField(editable=False, max_length=150, primary_key=True, serialize=False, unique=True)),
                    ('prefix', models.CharField(editable=False, max_length=8, unique=True)),
                    ('hashed_key', models.CharField(editable=False, max_length=150)),
                    ('created', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ('name', models.CharField(default=None, help_text='A free-form name for the API key. Need not be unique. 50 characters max.', max_length=50)),
                    ('revoked', models.BooleanField(blank=True, default=False, help_text='If the API key is revoked, clients cannot use it anymore. (This cannot be undone.)')),
                    ('expiry_date', models.DateTimeField(blank=True, help_text='Once API key expires, clients cannot use it anymore.', null=True, verbose_name='Expires')),
                    ('client', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='keys', to='agents.apiclient')),
                ],
                options={
                    'verbose_name': 'API key',
                    'verbose_name_plural': 'API keys',
                    'db_table': 'approvals_apiclientkey',
                    'ordering': ('-created',),
                    'abstract': False,
                },
            ),
            migrations.CreateModel(
                name='IdempotencyRecord',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('key', models.CharField(max_length=255)),
                    ('fingerprint', models.CharField(max_length=64)),
                    ('response_status', models.PositiveSmallIntegerField()),
                    ('response_body', models.JSONField()),
                    ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ('client', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.apiclient')),
                ],
                options={
                    'db_table': 'approvals_idempotencyrecord',
                    'constraints': [models.UniqueConstraint(fields=('client', 'key'), name='one_response_per_idempotency_key')],
                },
            ),
        ]),
    ]
