from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit log"

    def ready(self):
        # Logins and failed logins are audited (signal receivers).
        import audit.logins  # noqa: F401
