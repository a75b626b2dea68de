from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

GROUPS = ("reviewers", "compliance", "governance")


class Command(BaseCommand):
    help = "Create a user (or reset their password) in the reviewers, compliance or governance group."

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
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} {username!r} in group {group!r}.")
