"""A message's run is a plain id in Django's eyes: sessions_app no longer names runs' model.

State only. The column stays as it is, `run_id` with its foreign key constraint to runs_run
and its index (the index Django names for the column either way), so nothing in the database
changes and a message still cannot name a run that is not there.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0007_session_client_moves_to_agents"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="message", name="run"),
                migrations.AddField(
                    model_name="message",
                    name="run_id",
                    field=models.UUIDField(blank=True, db_index=True, null=True),
                ),
            ]
        ),
    ]
