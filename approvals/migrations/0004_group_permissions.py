"""Admin permissions of the compliance and governance groups (SPEC section 8).

compliance: view everything that records what happened (read-only audit work).
governance: the same, plus adding and changing tool descriptors (the registry).
Nobody gets a delete permission here: audit rows are append-only and the
registry's one write path (registry.descriptors.register) has no delete.
"""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations

VIEWED = {
    "approvals": ("approval", "auditevent", "toolcall", "tooldescriptor", "apiclient"),
    "runs": ("run", "runevent"),
    "sessions_app": ("session",),
}
VIEW = [(app, f"view_{model}") for app, models in VIEWED.items() for model in models]

GROUP_PERMISSIONS = {
    "compliance": VIEW,
    "governance": VIEW + [("approvals", "add_tooldescriptor"), ("approvals", "change_tooldescriptor")],
}


def _permissions(apps, pairs):
    Permission = apps.get_model("auth", "Permission")
    return [Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in pairs]


def grant(apps, schema_editor):
    # Permissions are normally created by post_migrate, after every migration has
    # run; on a fresh database they do not exist yet at this point.
    for label in VIEWED:
        create_permissions(global_apps.get_app_config(label), verbosity=0, apps=apps,
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
        ("approvals", "0003_groups"),
        ("runs", "0001_initial"),
        ("sessions_app", "0002_sqlite_guards"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]
    operations = [migrations.RunPython(grant, revoke)]
