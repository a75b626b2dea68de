"""The chain head keeps the hash it replaced, so an append links its row in one statement.

Rows keep their hashes: verification accepts a row hashed either way (audit/chain.py).
"""

from django.db import migrations, models

GENESIS_HASH = "0" * 64


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0015_approval_client_pending'),
    ]

    operations = [
        migrations.AddField(
            model_name='auditchainhead',
            name='prev_hash',
            field=models.CharField(db_default=GENESIS_HASH, default=GENESIS_HASH, max_length=64),
        ),
    ]
