from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals"

    def ready(self):
        from approvals import bound_context, claim_voids, expiry

        expiry.connect()  # a run that closes withdraws its open cards, in its close's transaction
        claim_voids.connect()  # a claim whose holder can no longer see its card ends at once
        bound_context.connect()  # a session holding open approvals keeps its patient
