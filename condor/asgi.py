"""ASGI entry point: daphne serves the websocket inbox and the SSE run stream (and, for
`make run`, everything else too; production may route plain HTTP to gunicorn instead)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
django_asgi_app = get_asgi_application()  # before importing consumers: it sets up Django

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from condor.gc_settings import configure_gc_for_serving  # noqa: E402
from condor.inprocess import start_if_configured  # noqa: E402
from core.body_limit import BodySizeLimit  # noqa: E402
from core.ws_origin import SameOriginValidator  # noqa: E402
from inbox.consumers import InboxConsumer  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodySizeLimit(django_asgi_app),
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter([path("ws/inbox/", InboxConsumer.as_asgi())]))),
    }
)
start_if_configured()  # no broker (no REDIS_URL): this serving process sweeps
configure_gc_for_serving()  # last: everything above is loaded
