from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "inbox"
    verbose_name = "Reviewers' inbox"

    def ready(self):
        from inbox import socket_signals

        socket_signals.connect()
