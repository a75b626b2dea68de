from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs"

    def ready(self):
        from django.db.models import Field, ForeignObject

        from core.lookups import AnyOf
        from runs import session_hooks

        # `pk__any=ids`: the sweep's batches filter by a thousand ids at once. Related
        # fields keep lookups of their own, so they are given it too.
        for field_class in (Field, ForeignObject):
            field_class.register_lookup(AnyOf)

        session_hooks.connect()  # a deleted session stops its active run
