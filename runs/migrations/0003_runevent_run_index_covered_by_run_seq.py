import django.db.models.deletion
from django.db import migrations, models

from core.migration_ops import drop_covered_fk_index


class Migration(migrations.Migration):
    """RunEvent.run loses its own index: runevent_run_seq (run, id) serves every lookup by run."""

    dependencies = [
        ('runs', '0002_rundispatch'),
    ]

    operations = [
        drop_covered_fk_index(
            'runevent', 'run',
            models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='events',
                              to='runs.run'),
            table='runs_runevent', column='run_id', index='runs_runevent_run_id_8bd13aa7'),
    ]
