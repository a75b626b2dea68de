"""The sweep's heartbeat moves here from approvals: the sweep writes it.

State only: the table keeps its name (Meta.db_table), so no row, index, constraint or
trigger is touched; Django is told the model's new home and nothing else.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0023_quick_reasons'),
        ('runs', '0004_run_suspended_at'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='Heartbeat',
                fields=[
                    ('name', models.CharField(max_length=40, primary_key=True, serialize=False)),
                    ('at', models.DateTimeField()),
                    ('details', models.JSONField(blank=True, default=dict)),
                ],
                options={
                    'db_table': 'approvals_heartbeat',
                },
            ),
        ]),
    ]
