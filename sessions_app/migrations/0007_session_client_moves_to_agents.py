"""A session's client is an agents.ApiClient now.

State only: the table keeps its name (Meta.db_table), so no row, index, constraint or
trigger is touched; Django is told the model's new home and nothing else.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0001_initial'),
        ('sessions_app', '0006_session_as_of_now'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AlterField(
                model_name='session',
                name='client',
                field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sessions', to='agents.apiclient'),
            ),
        ]),
    ]
