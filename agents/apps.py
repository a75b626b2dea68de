from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents and API keys"

    def ready(self):
        import agents.schema  # noqa: F401  (the security schemes, before any schema is built)
        from agents import api_key_cache

        # A key or a client saved or deleted through the ORM is struck from the key cache on commit.
        api_key_cache.connect()
