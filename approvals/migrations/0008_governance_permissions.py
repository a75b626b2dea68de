"""The governance console's permissions.

compliance: view the pending registry changes too (reads everything, edits nothing).
governance: the same, plus editing API clients and their keys (SPEC section 1: governance
edits the registry, review teams and API clients). Confirming or rejecting a registry
change needs change_tooldescriptor, which governance already has (0004).
"""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations

COMPLIANCE = [("approvals", "view_toolchange")]
GOVERNANCE = COMPLIANCE + [
    ("approvals", "add_apiclient"), ("approvals", "change_apiclient"),
    ("approvals", "view_apiclientkey"), ("approvals", "add_apiclientkey"), ("approvals", "change_apiclientkey"),
]
GROUP_PERMISSIONS = {"compliance": COMPLIANCE, "governance": GOVERNANCE}


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
    dependencies = [("approvals", "0007_governance_console")]
    operations = [migrations.RunPython(grant, revoke)]
