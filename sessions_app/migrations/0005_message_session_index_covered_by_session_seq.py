import django.db.models.deletion
from django.db import migrations, models

from core.migration_ops import drop_covered_fk_index


class Migration(migrations.Migration):
    """Message.session loses its own index: message_session_seq (session, seq) serves every lookup by session."""

    dependencies = [
        ('sessions_app', '0004_care_unit_max_length'),
    ]

    operations = [
        drop_covered_fk_index(
            'message', 'session',
            models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='messages',
                              to='sessions_app.session'),
            table='sessions_app_message', column='session_id', index='sessions_app_message_session_id_a5aec9af'),
    ]
