from django.apps import AppConfig
from django.db.models.signals import post_migrate


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    label = "sessions_app"
    verbose_name = "Sessions"

    def ready(self):
        from sessions_app import sqlite_guards

        # Once per migrate (sender: this app): a table rebuilt on SQLite lost its guards.
        post_migrate.connect(
            sqlite_guards.reinstall_after_migrate, sender=self, dispatch_uid="sessions_app.sqlite_guards"
        )
