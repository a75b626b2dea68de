"""approvals lets go of the models that moved to agents, audit, registry and runs.

State only: the table keeps its name (Meta.db_table), so no row, index, constraint or
trigger is touched; Django is told the model's new home and nothing else.

Then each moved model's content type takes its new app label, so the permissions, the
groups that hold them and the admin's log entries follow the model rather than being
orphaned and re-created empty.
"""

import django.db.models.deletion
from django.db import migrations, models

MOVED = {
    "apiclient": "agents", "apiclientkey": "agents", "idempotencyrecord": "agents",
    "auditevent": "audit", "auditchainhead": "audit",
    "tooldescriptor": "registry", "toolchange": "registry", "accessgrant": "registry",
    "heartbeat": "runs",
}


def relabel(apps, schema_editor, moves):
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
    for model, (old, new) in moves.items():
        # Where the new label is already there (a database migrated with the new apps
        # present, never an upgrade), the old row stays rather than break the unique key.
        if not content_types.filter(app_label=new, model=model).exists():
            content_types.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    relabel(apps, schema_editor, {model: ("approvals", label) for model, label in MOVED.items()})


def backwards(apps, schema_editor):
    relabel(apps, schema_editor, {model: (label, "approvals") for model, label in MOVED.items()})


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('audit', '0001_initial'),
        ('registry', '0001_initial'),
        ('runs', '0005_heartbeat_moves_here'),
        ('agents', '0001_initial'),
        ('approvals', '0023_quick_reasons'),
        ('sessions_app', '0007_session_client_moves_to_agents'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveField(
                model_name='accessgrant',
                name='decided_by',
            ),
            migrations.RemoveField(
                model_name='accessgrant',
                name='group',
            ),
            migrations.RemoveField(
                model_name='accessgrant',
                name='groups',
            ),
            migrations.RemoveField(
                model_name='accessgrant',
                name='permissions',
            ),
            migrations.RemoveField(
                model_name='accessgrant',
                name='proposed_by',
            ),
            migrations.RemoveField(
                model_name='accessgrant',
                name='user',
            ),
            migrations.RemoveField(
                model_name='auditevent',
                name='actor_client',
            ),
            migrations.AlterField(
                model_name='approval',
                name='client',
                field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.apiclient'),
            ),
            migrations.RemoveField(
                model_name='idempotencyrecord',
                name='client',
            ),
            migrations.RemoveField(
                model_name='apiclientkey',
                name='client',
            ),
            migrations.DeleteModel(
                name='AuditChainHead',
            ),
            migrations.RemoveField(
                model_name='auditevent',
                name='actor_user',
            ),
            migrations.DeleteModel(
                name='Heartbeat',
            ),
            migrations.RemoveField(
                model_name='toolchange',
                name='decided_by',
            ),
            migrations.RemoveField(
                model_name='toolchange',
                name='proposed_by',
            ),
            migrations.DeleteModel(
                name='ToolDescriptor',
            ),
            migrations.DeleteModel(
                name='AccessGrant',
            ),
            migrations.DeleteModel(
                name='IdempotencyRecord',
            ),
            migrations.DeleteModel(
                name='ApiClient',
            ),
            migrations.DeleteModel(
                name='ApiClientKey',
            ),
            migrations.DeleteModel(
                name='AuditEvent',
            ),
            migrations.DeleteModel(
                name='ToolChange',
            ),
        ]),
        migrations.RunPython(forwards, backwards),
    ]
