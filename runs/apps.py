from django.apps import AppConfig
from django.conf import settings


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs"

    def ready(self):
        from runs import session_hooks

        session_hooks.install()
        if settings.CONDOR_INPROCESS_SWEEPS:
            from runs.inprocess import start_sweeper

            start_sweeper()
