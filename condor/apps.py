from django.apps import AppConfig


class CondorConfig(AppConfig):
    """The project root as an app: its commands (`sweep`) and tasks (the sweep pass) compose the others'."""

    name = "condor"
    verbose_name = "Condor"

    def ready(self):
        # drf-spectacular's extensions register as they are defined: before any schema is built.
        import core.schema  # noqa: F401
