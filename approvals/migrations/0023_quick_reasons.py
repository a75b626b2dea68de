

"""Quick rejection reasons: governance edits them in the admin, compliance reads them and their audit rows."""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

GROUP_PERMISSIONS = {
    "governance": [("approvals", f"{action}_quickreason") for action in ("view", "add", "change", "delete")],
    "compliance": [("approvals", "view_quickreason")],
}


def _permissions(apps, pairs):
    Permission = apps.get_model("auth", "Permission")
    return [Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in pairs]


def grant(apps, schema_editor):
    # As in 0004: on a fresh database post_migrate has not created the permissions yet.
    create_permissions(global_apps.get_app_config("approvals"), verbosity=0, apps=apps,
                       using=schema_editor.connection.alias)
    Group = apps.get_model("auth", "Group")
    for name, pairs in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*_permissions(apps, pairs))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name, pairs in GROUP_PERMISSIONS.items():
        group = Group.objects.filter(name=name).first()
        if group is not None:
            group.permissions.remove(*_permissions(apps, pairs))


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0022_approval_bound_context_and_identity_args'),
    ]

    operations = [
        migrations.AlterField(
            model_name='auditevent',
            name='kind',
            field=models.CharField(choices=[('verdict', 'Verdict'), ('suspend', 'Suspend'), ('decision', 'Decision'), ('consume', 'Consume'), ('result', 'Result'), ('expiry', 'Expiry'), ('withdrawal', 'Withdrawal'), ('run_close', 'Run Close'), ('taint', 'Taint'), ('registry_change', 'Registry Change'), ('export', 'Admin export'), ('login', 'Login'), ('login_failed', 'Failed login'), ('verify', 'Chain verification'), ('session_change', 'Session change'), ('claim', 'Claim on an approval'), ('review_team', 'Review team change'), ('escalation', 'Escalation'), ('api_client', 'API client or key change'), ('args_viewed', 'Full arguments viewed'), ('account', 'Account, group or permission change'), ('access_grant', 'Governance or superuser grant'), ('quick_reason', 'Quick rejection reason change')], max_length=24),
        ),
        migrations.CreateModel(
            name='QuickReason',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('text', models.CharField(help_text='The reason as the reviewer sees it and the agent is told, e.g. "Duplicate of an existing order".', max_length=200, unique=True)),
                ('position', models.PositiveSmallIntegerField(default=0, help_text='Lower comes first in the reject form.')),
                ('active', models.BooleanField(default=True, help_text="Offered in the inbox's reject form.")),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['position', 'text'],
                'constraints': [models.CheckConstraint(condition=models.Q(('text', ''), _negated=True), name='quick_reason_text_not_blank')],
            },
        ),
        migrations.RunPython(grant, revoke),
    ]
