from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals and tool registry"

    def ready(self):
        # Registers the API-key scheme with drf-spectacular before any schema is built.
        # Logins and failed logins are audited (signal receivers).
        import approvals.audit_logins  # noqa: F401
        import condor.schema  # noqa: F401
        from approvals import audit, bound_context, claim_voids, socket_signals
        from condor import audit as front_door

        socket_signals.connect()
        claim_voids.connect()  # a claim whose holder can no longer see its card ends at once
        bound_context.install()  # a session's re-link asks whether it holds open approvals
        front_door.install(audit.record)
        # A key or a client saved or deleted through the ORM is struck from the key cache on commit.
        from condor import api_key_cache

        api_key_cache.connect()
