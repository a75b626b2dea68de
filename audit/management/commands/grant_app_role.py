from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from audit.db_roles import grant_statements


class Command(BaseCommand):
    help = (
        "Print (or, with --execute, run as the table owner) the grants for the role the application "
        "connects as: full use of Condor's tables, but only INSERT and SELECT on the audit log. "
        "Run it after every migrate."
    )

    def add_arguments(self, parser):
        parser.add_argument("role", help="The application's database role (it must exist).")
        parser.add_argument("--schema", default="public")
        parser.add_argument("--execute", action="store_true", help="Run the statements instead of printing them.")

    def handle(self, *args, role, schema, execute, **options):
        if connection.vendor != "postgresql":
            raise CommandError(f"Database roles are a PostgreSQL arrangement; this database is {connection.vendor}.")
        try:
            statements = grant_statements(role, schema)
        except ValueError as error:
            raise CommandError(str(error)) from None
        if not execute:
            self.stdout.write("\n".join(f"{sql};" for sql in statements))
            return
        with transaction.atomic(), connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
        self.stdout.write(f"Granted {role} the application's rights in schema {schema}.")
