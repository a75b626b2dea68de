"""A session's care_unit is at most 64 characters (SPEC section 10), as the API always accepted.

The column allowed 120; only a write past the API could have stored more, and PostgreSQL
refuses this migration while such a row exists rather than cut a unit (a cut unit could
route the session's cards to another team).
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0003_sessions_surface'),
    ]

    operations = [
        migrations.AlterField(
            model_name='session',
            name='care_unit',
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
