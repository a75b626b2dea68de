"""Who reads access grants (SPEC section 8): compliance and governance view them, nobody edits them.

Confirming or rejecting a grant needs a governance admin (approvals/four_eyes.py), not a model permission.
"""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP_PERMISSIONS = {"compliance": [("approvals", "view_accessgrant")], "governance": [("approvals", "view_accessgrant")]}


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
    dependencies = [("approvals", "0019_access_grants_and_account_audit")]
    operations = [migrations.RunPython(grant, revoke)]
