from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from audit import trail as audit
from governance.accounts import record_password_set, record_user_change, user_snapshot

GROUPS = ("reviewers", "compliance", "governance")


class Command(BaseCommand):
    help = (
        "Create a user (or reset their password) in the reviewers, compliance or governance group. "
        "The way to make the first governance admins: audited as command:create_reviewer."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--group", choices=GROUPS, default="reviewers")

    @transaction.atomic
    def handle(self, *args, username, password, group, **options):
        if not password:
            raise CommandError("--password must not be empty.")
        user = get_user_model().objects.filter(username=username).first()
        created = user is None
        before = None if created else user_snapshot(user)
        if created:
            user = get_user_model()(username=username)
        try:
            validate_password(password, user)  # AUTH_PASSWORD_VALIDATORS, as the admin's password form
        except ValidationError as error:
            raise CommandError(f"Password refused for {username!r}: {' '.join(error.messages)}") from None
        user.set_password(password)
        # Compliance and governance work in the admin; reviewers only in the inbox.
        user.is_staff = user.is_staff or group in ("compliance", "governance")
        user.save()
        user.groups.add(Group.objects.get(name=group))
        actor = audit.command("create_reviewer")
        after = user_snapshot(user)
        if created or after != before:
            record_user_change("created" if created else "updated", user.pk, before, after, actor_system=actor)
        if not created:
            record_password_set(user, actor_system=actor)
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} {username!r} in group {group!r}.")
