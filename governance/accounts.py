"""Accounts and groups as the audit log records them: who may sign in, and with which powers.

Every change to an account, a group's permissions, a membership or the staff and
superuser flags is an `account` audit row with the object before and after, written
in the transaction of the change, whether the admin (governance/admin_accounts.py)
or a management command made it. A password never enters the log, hashed or not:
a row says only that it was set.
"""

from audit import trail as audit
from registry.models.access_grant import permission_labels


def user_snapshot(user) -> dict:
    return {
        "username": user.get_username(),
        "is_active": user.is_active,
        "is_staff": user.is_staff,
        "is_superuser": user.is_superuser,
        "usable_password": user.has_usable_password(),
        "groups": sorted(user.groups.values_list("name", flat=True)),
        "permissions": permission_labels(user.user_permissions.select_related("content_type")),
    }


def group_snapshot(group) -> dict:
    return {"name": group.name, "permissions": permission_labels(group.permissions.select_related("content_type"))}


def record_user_change(decision: str, user_id: int, before: dict | None, after: dict | None, **actor) -> None:
    """An `account` row for the user `user_id` (`actor_user=` or `actor_system=`), in the caller's transaction."""
    audit.record(
        audit.Kind.ACCOUNT, decision=decision, data={"user_id": user_id, "before": before, "after": after}, **actor
    )


def record_password_set(user, **actor) -> None:
    audit.record(
        audit.Kind.ACCOUNT,
        decision="password_set",
        data={"user_id": user.pk, "username": user.get_username(), "usable_password": user.has_usable_password()},
        **actor,
    )
